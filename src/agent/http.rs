//! One HTTP POST whose response is read on a helper thread, so that the caller waits with
//! deadlines of its own choosing.
//!
//! Why a thread: [`ureq`] is blocking and fixes a connection's read timeout when it connects,
//! but a streamed model answer needs two different waits: the read timeout (nothing arrived
//! for that long: the server is gone) and, once the answer is known to be complete, a short
//! grace for its trailing bytes. The thread sends the request, then the status, then what
//! each read of the body returns, through a bounded channel; the caller picks the wait of
//! every [`Exchange::head`] and [`Exchange::next`].
//!
//! Bounds: at most [`QUEUED_READS`] reads of at most [`READ_SIZE`] bytes wait in the channel
//! (the thread blocks when it is full); an error status's body is kept up to
//! [`MAX_ERROR_BODY`] bytes. When the caller drops the [`Exchange`], the thread ends at the
//! return of its current read (more bytes, the server's close, or the agent's own read
//! timeout, whichever comes first), dropping the connection: an abandoned connection lives at
//! most one read timeout.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::Duration;

use super::model::ModelError;

/// The largest read handed over at once.
pub const READ_SIZE: usize = 16 * 1024;
/// How many reads may wait for the caller.
pub const QUEUED_READS: usize = 8;
/// How much of an error status's body is kept.
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// The response's status line and headers, as far as the caller needs them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Head {
    /// A success status; the body follows through [`Exchange::next`].
    Ok {
        /// The media type, without parameters, lower-cased (`text/event-stream`).
        content_type: String,
    },
    /// An error status (4xx, 5xx) and the start of its body.
    Status {
        /// The status code.
        code: u16,
        /// The body, lossily decoded, at most [`MAX_ERROR_BODY`] bytes of it.
        body: String,
        /// The `retry-after` header, as sent (seconds or an HTTP date).
        retry_after: Option<String>,
    },
}

/// Why no head came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// No connection, or it failed before the head (refused, DNS, TLS, reset).
    Transport(String),
    /// Nothing within the wait.
    TimedOut,
}

/// The next piece of the body.
#[derive(Debug)]
pub enum Next {
    /// The bytes of one read.
    Bytes(Vec<u8>),
    /// The body ended (the server closed it, or its declared length was read).
    End,
    /// Reading failed.
    Failed(io::Error),
    /// Nothing within the wait.
    TimedOut,
}

enum Message {
    Head(Result<Head, String>),
    Body(Next),
}

/// A request in flight.
pub struct Exchange {
    receiver: Receiver<Message>,
    ended: bool,
}

/// Starts `POST url` with `headers` and `body` on a new thread.
pub fn post(agent: &ureq::Agent, url: &str, headers: &[(&str, String)], body: String) -> Exchange {
    let mut request = agent.post(url);
    for (name, value) in headers {
        request = request.set(name, value);
    }
    let (sender, receiver) = mpsc::sync_channel(QUEUED_READS);
    std::thread::spawn(move || exchange(request, body, sender));
    Exchange {
        receiver,
        ended: false,
    }
}

fn exchange(request: ureq::Request, body: String, sender: SyncSender<Message>) {
    let response = match request.send_string(&body) {
        Ok(response) => response,
        Err(ureq::Error::Status(code, response)) => {
            let retry_after = response.header("retry-after").map(str::to_owned);
            let mut kept = Vec::new();
            let _ = response
                .into_reader()
                .take(MAX_ERROR_BODY as u64)
                .read_to_end(&mut kept);
            let body = String::from_utf8_lossy(&kept).into_owned();
            let _ = sender.send(Message::Head(Ok(Head::Status {
                code,
                body,
                retry_after,
            })));
            return;
        }
        Err(ureq::Error::Transport(t)) => {
            let _ = sender.send(Message::Head(Err(t.to_string())));
            return;
        }
    };
    let content_type = response.content_type().to_ascii_lowercase();
    if sender
        .send(Message::Head(Ok(Head::Ok { content_type })))
        .is_err()
    {
        return;
    }
    let mut reader = response.into_reader();
    let mut buf = vec![0u8; READ_SIZE];
    loop {
        let next = match reader.read(&mut buf) {
            Ok(0) => Next::End,
            Ok(n) => Next::Bytes(buf[..n].to_vec()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Next::Failed(e),
        };
        let last = !matches!(next, Next::Bytes(_));
        if sender.send(Message::Body(next)).is_err() || last {
            return;
        }
    }
}

impl Exchange {
    /// Waits at most `wait` for the status.
    pub fn head(&mut self, wait: Duration) -> Result<Head, HeadError> {
        match self.receiver.recv_timeout(wait) {
            Ok(Message::Head(Ok(head))) => Ok(head),
            Ok(Message::Head(Err(e))) => Err(HeadError::Transport(e)),
            Ok(Message::Body(_)) => Err(HeadError::Transport("a body before the head".into())),
            Err(RecvTimeoutError::Timeout) => Err(HeadError::TimedOut),
            Err(RecvTimeoutError::Disconnected) => {
                Err(HeadError::Transport("the request thread ended".into()))
            }
        }
    }

    /// [`Exchange::head`] for a model client, its failures sorted as the loop acts on them: no
    /// connection is [`ModelError::Transport`], no head within `wait` is
    /// [`ModelError::Disconnected`], naming `variable`, the setting that sets the wait.
    pub fn model_head(&mut self, wait: Duration, variable: &str) -> Result<Head, ModelError> {
        self.head(wait).map_err(|e| match e {
            HeadError::Transport(e) => ModelError::Transport(e),
            HeadError::TimedOut => ModelError::Disconnected(format!(
                "no answer within the read timeout ({wait:?}, {variable})"
            )),
        })
    }

    /// Waits at most `wait` for the next piece of the body (after a successful head). Once
    /// the body has ended or failed, every call returns [`Next::End`].
    pub fn next(&mut self, wait: Duration) -> Next {
        if self.ended {
            return Next::End;
        }
        let next = match self.receiver.recv_timeout(wait) {
            Ok(Message::Body(next)) => next,
            Ok(Message::Head(_)) => Next::Failed(io::Error::other("a second head")),
            Err(RecvTimeoutError::Timeout) => return Next::TimedOut,
            Err(RecvTimeoutError::Disconnected) => {
                Next::Failed(io::Error::other("the reading thread ended"))
            }
        };
        self.ended = !matches!(next, Next::Bytes(_));
        next
    }
}
