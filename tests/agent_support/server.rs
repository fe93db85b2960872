//! A loopback HTTP server for the provider tests: it answers each request with the next
//! scripted [`Reply`], writes event streams in HTTP chunks of random sizes (with a pause now
//! and then), and hands back the requests it received (headers and JSON body).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// A tiny deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    /// `text` cut into pieces of 1 to `max` bytes, on character boundaries.
    pub fn pieces<'t>(&mut self, text: &'t str, max: usize) -> Vec<&'t str> {
        let mut out = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut n = (1 + self.below(max)).min(rest.len());
            while !rest.is_char_boundary(n) {
                n += 1;
            }
            out.push(&rest[..n]);
            rest = &rest[n..];
        }
        out
    }
}

/// What the server answers to one request.
pub enum Reply {
    /// A 200 event stream of these bytes; with `drop_after`, the socket closes after that many
    /// body bytes, mid-stream.
    Stream {
        body: Vec<u8>,
        drop_after: Option<usize>,
    },
    /// An error status with extra headers and a body.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// A 200 `application/json` answer of these bytes (a server that does not stream).
    Json(String),
    /// A 200 event stream of these bytes, in one HTTP chunk, after which the connection stays
    /// open and silent for this long (on its own thread: the server goes on to the next
    /// request).
    Hold(Vec<u8>, Duration),
    /// Nothing at all (not even a status line) for this long.
    Silent(Duration),
}

impl Reply {
    /// A whole stream.
    pub fn stream(body: Vec<u8>) -> Reply {
        Reply::Stream {
            body,
            drop_after: None,
        }
    }

    /// A stream whose socket closes after `after` body bytes, mid-stream.
    pub fn dropped(body: Vec<u8>, after: usize) -> Reply {
        Reply::Stream {
            body,
            drop_after: Some(after),
        }
    }

    /// An error status with a JSON error body and no extra header.
    pub fn status(code: u16, message: &str) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            body: serde_json::json!({"error": {"message": message}}).to_string(),
        }
    }

    /// An error status with this body as it stands and no extra header.
    pub fn raw_status(code: u16, body: &str) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Received {
    /// The request line's path.
    pub path: String,
    /// Headers, names lower-cased.
    pub headers: BTreeMap<String, String>,
    /// The JSON body.
    pub body: Value,
}

/// Serves `replies` in order, one connection each, on `127.0.0.1`; returns the base URL
/// (`http://127.0.0.1:PORT`) and the handle that yields the requests received.
pub fn serve(replies: Vec<Reply>, seed: u64) -> (String, JoinHandle<Vec<Received>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut rng = Rng(seed);
        // The pauses draw from a generator of their own: the chunk sizes are the seed's alone.
        let mut pauses = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
        let mut requests = Vec::new();
        for reply in replies {
            // A client that asks less than expected leaves the rest of the replies unsent.
            let Some(stream) = accept_within(&listener, Duration::from_secs(20)) else {
                break;
            };
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            requests.push(read_request(&stream));
            let mut stream = stream;
            match reply {
                Reply::Status {
                    code,
                    headers,
                    body,
                } => {
                    let mut head = format!("HTTP/1.1 {code} Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
                    for (name, value) in headers {
                        head.push_str(&format!("{name}: {value}\r\n"));
                    }
                    let _ = write!(stream, "{head}\r\n{body}");
                }
                Reply::Json(body) => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
                Reply::Silent(hold) => {
                    close_after(stream, hold);
                    continue;
                }
                Reply::Hold(body, hold) => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                    );
                    if !body.is_empty() {
                        let _ = write!(stream, "{:x}\r\n", body.len());
                        let _ = stream.write_all(&body);
                        let _ = stream.write_all(b"\r\n");
                    }
                    let _ = stream.flush();
                    close_after(stream, hold);
                    continue;
                }
                Reply::Stream { body, drop_after } => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                    );
                    let end = drop_after.unwrap_or(body.len()).min(body.len());
                    let mut at = 0;
                    while at < end {
                        let n = (1 + rng.below(40)).min(end - at);
                        let _ = write!(stream, "{n:x}\r\n");
                        let _ = stream.write_all(&body[at..at + n]);
                        let _ = stream.write_all(b"\r\n");
                        let _ = stream.flush();
                        at += n;
                        if pauses.below(8) == 0 {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                    if drop_after.is_none() {
                        let _ = stream.write_all(b"0\r\n\r\n");
                    }
                }
            }
            let _ = stream.flush();
            drop(stream);
        }
        requests
    });
    (base, handle)
}

/// Keeps `stream` open, on a thread of its own, for `hold`, then closes it.
fn close_after(stream: TcpStream, hold: Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(hold);
        drop(stream);
    });
}

/// The next connection, or none within `wait`.
fn accept_within(listener: &TcpListener, wait: Duration) -> Option<TcpStream> {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + wait;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).unwrap();
                return Some(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return None,
        }
    }
}

fn read_request(stream: &TcpStream) -> Received {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let path = line.split(' ').nth(1).unwrap_or("").to_owned();
    let mut headers = BTreeMap::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let length: usize = headers
        .get("content-length")
        .map_or(0, |v| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    Received {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap(),
    }
}
