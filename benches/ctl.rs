//! CTL throughput against serde_json parsing the same calls written as JSON, in one run.
//!
//! Two workloads with the same calls in both framings: body-heavy (few calls, 4 KiB file
//! contents with quotes, braces and newlines) and header-heavy (many calls with short
//! arguments). CTL is fed whole, in 64 KiB, 64-byte and 1-byte chunks; serde_json parses the
//! whole JSON text once (its best case: a buffering runtime re-parses on every chunk). The
//! `allowed` group measures one `allowed()` query.
//!
//! The `ctl_extended/*` groups frame the same calls in extended CTL (every argument inline when
//! it has no LF, else a heredoc with the tag `EOF`) and parse them in extended mode, beside the
//! strict figures of the same run: the goal is body-heavy within 1.5× of strict, and
//! strict's header-heavy figures kept. `tag_search_floor` is the least any heredoc parser can
//! do on the body-heavy stream: one `memmem` search for LF `EOF` LF over it.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use frontier::contract::PushParser;
use frontier::ctl::{CallAssembler, CtlEvent, CtlMode, CtlParser, Limits};

struct Call {
    id: String,
    name: &'static str,
    args: Vec<(&'static str, String)>,
}

fn body_heavy() -> Vec<Call> {
    (0..64)
        .map(|i| {
            let mut content = String::new();
            while content.len() < 4096 {
                content.push_str(&format!(
                    "fn f{i}() {{ let s = \"quoted {{braces}}\\n\"; println!(\"{{s}} {}\"); }}\n",
                    content.len()
                ));
            }
            Call {
                id: format!("c{i}"),
                name: "write_file",
                args: vec![("path", format!("src/module_{i}.rs")), ("content", content)],
            }
        })
        .collect()
}

fn header_heavy() -> Vec<Call> {
    (0..4096)
        .map(|i| Call {
            id: format!("c{i}"),
            name: if i % 2 == 0 { "read_file" } else { "list_dir" },
            args: vec![("path", format!("src/dir_{}/file_{i}.rs", i % 17))],
        })
        .collect()
}

fn to_ctl(calls: &[Call]) -> Vec<u8> {
    let mut out = Vec::new();
    for call in calls {
        out.extend_from_slice(format!("call {} {}\n", call.id, call.name).as_bytes());
        for (key, value) in &call.args {
            out.extend_from_slice(format!("arg {key} {}\n", value.len()).as_bytes());
            out.extend_from_slice(value.as_bytes());
        }
        out.extend_from_slice(b"end\n");
    }
    out
}

/// The calls in extended CTL: inline values, and heredocs for values with an LF (each of them
/// ends with one and has no line `EOF`).
fn to_extended(calls: &[Call]) -> Vec<u8> {
    let mut out = Vec::new();
    for call in calls {
        out.extend_from_slice(format!("call {} {}\n", call.id, call.name).as_bytes());
        for (key, value) in &call.args {
            if value.contains('\n') {
                assert!(value.ends_with('\n') && !value.lines().any(|l| l == "EOF"));
                out.extend_from_slice(format!("arg {key} <<EOF\n{value}EOF\n").as_bytes());
            } else {
                out.extend_from_slice(format!("arg {key} = {value}\n").as_bytes());
            }
        }
        out.extend_from_slice(b"end\n");
    }
    out
}

fn to_json(calls: &[Call]) -> Vec<u8> {
    let list: Vec<serde_json::Value> = calls
        .iter()
        .map(|call| {
            let args: serde_json::Map<String, serde_json::Value> = call
                .args
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({"id": call.id, "name": call.name, "arguments": args})
        })
        .collect();
    serde_json::to_vec(&list).unwrap()
}

/// Parses a CTL stream in chunks and counts `call_end` events: the parser alone, zero copy.
fn count_calls(input: &[u8], chunk: usize) -> usize {
    count_calls_in(CtlParser::default(), input, chunk)
}

fn count_calls_in(mut parser: CtlParser, input: &[u8], chunk: usize) -> usize {
    let mut calls = 0;
    for piece in input.chunks(chunk) {
        parser
            .push(piece, &mut |e| {
                calls += matches!(e, CtlEvent::CallEnd) as usize
            })
            .unwrap();
    }
    assert!(parser.accepting());
    calls
}

/// Parses a CTL stream in chunks and builds owned `ToolCall`s, as a runtime would.
fn assemble_calls(input: &[u8], chunk: usize) -> usize {
    assemble_calls_in(CtlParser::default(), input, chunk)
}

fn assemble_calls_in(mut parser: CtlParser, input: &[u8], chunk: usize) -> usize {
    let mut assembler = CallAssembler::default();
    let mut calls = 0;
    for piece in input.chunks(chunk) {
        parser
            .push(piece, &mut |e| {
                calls += matches!(assembler.on_event(&e), Ok(Some(_))) as usize;
            })
            .unwrap();
    }
    assert!(parser.accepting());
    calls
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct JsonCall {
    id: String,
    name: String,
    arguments: std::collections::BTreeMap<String, String>,
}

/// The same call borrowing from the input where JSON has no escapes (serde_json's fastest).
#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct JsonCallBorrowed<'a> {
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    arguments: std::collections::BTreeMap<&'a str, std::borrow::Cow<'a, str>>,
}

fn throughput(c: &mut Criterion) {
    for (workload, calls) in [
        ("body_heavy", body_heavy()),
        ("header_heavy", header_heavy()),
    ] {
        let ctl = to_ctl(&calls);
        let json = to_json(&calls);
        let mut group = c.benchmark_group(format!("ctl/{workload}"));
        group.throughput(Throughput::Bytes(ctl.len() as u64));
        for chunk in [ctl.len(), 65536, 64, 1] {
            let label = if chunk == ctl.len() {
                "whole".to_string()
            } else {
                chunk.to_string()
            };
            group.bench_with_input(
                BenchmarkId::new("frontier_events", &label),
                &chunk,
                |b, &chunk| b.iter(|| assert_eq!(count_calls(black_box(&ctl), chunk), calls.len())),
            );
            group.bench_with_input(
                BenchmarkId::new("frontier_calls", &label),
                &chunk,
                |b, &chunk| {
                    b.iter(|| assert_eq!(assemble_calls(black_box(&ctl), chunk), calls.len()))
                },
            );
        }
        group.throughput(Throughput::Bytes(json.len() as u64));
        group.bench_function("serde_json_typed/whole", |b| {
            b.iter(|| {
                let parsed: Vec<JsonCall> = serde_json::from_slice(black_box(&json)).unwrap();
                assert_eq!(parsed.len(), calls.len());
            })
        });
        group.bench_function("serde_json_borrowed/whole", |b| {
            b.iter(|| {
                let parsed: Vec<JsonCallBorrowed> =
                    serde_json::from_slice(black_box(&json)).unwrap();
                assert_eq!(parsed.len(), calls.len());
            })
        });
        group.bench_function("serde_json_value/whole", |b| {
            b.iter(|| {
                let parsed: serde_json::Value = serde_json::from_slice(black_box(&json)).unwrap();
                assert_eq!(parsed.as_array().unwrap().len(), calls.len());
            })
        });
        group.finish();
    }
}

/// The same calls framed in extended CTL, parsed in extended mode, and the strict parser on
/// the counted framing in the same group.
fn extended(c: &mut Criterion) {
    let extended = || CtlParser::with_mode(Limits::default(), CtlMode::Extended);
    for (workload, calls) in [
        ("body_heavy", body_heavy()),
        ("header_heavy", header_heavy()),
    ] {
        let counted = to_ctl(&calls);
        let framed = to_extended(&calls);
        let mut group = c.benchmark_group(format!("ctl_extended/{workload}"));
        for chunk in [usize::MAX, 64, 1] {
            let label = if chunk == usize::MAX {
                "whole".to_string()
            } else {
                chunk.to_string()
            };
            group.throughput(Throughput::Bytes(framed.len() as u64));
            group.bench_with_input(
                BenchmarkId::new("extended_events", &label),
                &chunk,
                |b, &chunk| {
                    b.iter(|| {
                        let n =
                            count_calls_in(extended(), black_box(&framed), chunk.min(framed.len()));
                        assert_eq!(n, calls.len())
                    })
                },
            );
            group.bench_with_input(
                BenchmarkId::new("extended_calls", &label),
                &chunk,
                |b, &chunk| {
                    b.iter(|| {
                        let n = assemble_calls_in(
                            extended(),
                            black_box(&framed),
                            chunk.min(framed.len()),
                        );
                        assert_eq!(n, calls.len())
                    })
                },
            );
            group.throughput(Throughput::Bytes(counted.len() as u64));
            group.bench_with_input(
                BenchmarkId::new("strict_events", &label),
                &chunk,
                |b, &chunk| {
                    b.iter(|| {
                        assert_eq!(
                            count_calls(black_box(&counted), chunk.min(counted.len())),
                            calls.len()
                        )
                    })
                },
            );
            group.bench_with_input(
                BenchmarkId::new("strict_calls", &label),
                &chunk,
                |b, &chunk| {
                    b.iter(|| {
                        assert_eq!(
                            assemble_calls(black_box(&counted), chunk.min(counted.len())),
                            calls.len()
                        )
                    })
                },
            );
        }
        if workload == "body_heavy" {
            // The floor of any heredoc parser: one substring search for the tag lines over the
            // same bytes, and nothing else (no events, no header checks).
            let heredocs = calls
                .iter()
                .flat_map(|c| &c.args)
                .filter(|(_, v)| v.contains('\n'));
            let expected = heredocs.count();
            let finder = memchr::memmem::Finder::new(b"\nEOF\n");
            group.throughput(Throughput::Bytes(framed.len() as u64));
            group.bench_function("tag_search_floor/whole", |b| {
                b.iter(|| assert_eq!(finder.find_iter(black_box(&framed)).count(), expected))
            });
        }
        group.finish();
    }
}

fn allowed(c: &mut Criterion) {
    let mut group = c.benchmark_group("ctl/allowed");
    for (state, prefix) in [
        ("in_name", &b"call c1 read_fi"[..]),
        ("in_nbytes", b"call c1 w\narg content 1234"),
        ("in_body", b"call c1 w\narg content 100\nabc"),
    ] {
        let mut parser = CtlParser::default();
        parser.push(prefix, &mut |_| {}).unwrap();
        group.bench_function(state, |b| b.iter(|| black_box(&parser).allowed()));
    }
    let machine = *CtlParser::default().machine();
    group.bench_function("decoder_step_header", |b| {
        b.iter(|| {
            let mut m = machine;
            for &byte in b"call c1 read_file\n" {
                assert!(m.allowed().contains(byte));
                m.step(byte).unwrap();
            }
            m
        })
    });
    group.finish();
}

criterion_group!(benches, throughput, extended, allowed);
criterion_main!(benches);
