//! The checked-in header and the Rust entry points agree: every prototype in
//! `include/frontier.h` has an `extern "C"` function of the same name in `src/`, with the same
//! return type and parameter types (Rust types translated to C), and the reverse; likewise
//! `FrontierVocabInit`'s fields and the event callback's type. Both sides are read from the
//! files, so editing either alone fails here.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// A function's C signature: return type and parameter types, normalised.
type Signature = (String, Vec<String>);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Collapses whitespace and puts one space on each side of `*`.
fn normalise(c_type: &str) -> String {
    let spaced = c_type.replace('*', " * ");
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A C declaration `type name` or `type name[N]` without its name (an array parameter is a
/// pointer).
fn c_param_type(decl: &str) -> String {
    let decl = decl.trim();
    let (decl, array) = match decl.find('[') {
        Some(at) => (&decl[..at], true),
        None => (decl, false),
    };
    let name_start = decl
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let mut ty = decl[..name_start].to_owned();
    if array {
        ty.push('*');
    }
    normalise(&ty)
}

fn split_params(params: &str) -> Vec<String> {
    let params = params.trim();
    if params.is_empty() || params == "void" {
        return Vec::new();
    }
    params.split(',').map(c_param_type).collect()
}

/// The header's prototypes: each statement ending in `;` that declares `frontier_*(...)`.
fn header_functions(header: &str) -> BTreeMap<String, Signature> {
    let code: String = header
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let code = strip_c_comments(&code);
    let mut out = BTreeMap::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(open) = statement.find("frontier_") else {
            continue;
        };
        if statement.starts_with("typedef") || statement.contains('{') {
            continue;
        }
        let paren = statement[open..]
            .find('(')
            .expect("a prototype has parameters")
            + open;
        let name = statement[open..paren].trim().to_owned();
        let ret = normalise(&statement[..open]);
        let close = statement.rfind(')').expect("closing parenthesis");
        out.insert(name, (ret, split_params(&statement[paren + 1..close])));
    }
    out
}

fn strip_c_comments(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find("*/").expect("comment closed") + at + 2;
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The C spelling of a Rust FFI type.
fn c_of_rust(ty: &str) -> String {
    let ty = ty.trim();
    let c = if let Some(inner) = ty.strip_prefix("*const ") {
        let inner = c_of_rust(inner);
        if inner.ends_with('*') {
            format!("{inner} const *") // a read-only array of pointers: `T *const *`
        } else {
            format!("const {inner} *")
        }
    } else if let Some(inner) = ty.strip_prefix("*mut ") {
        format!("{} *", c_of_rust(inner))
    } else {
        match ty {
            "c_char" => "char",
            "c_void" => "void",
            "u8" => "uint8_t",
            "u32" => "uint32_t",
            "i32" => "int32_t",
            "usize" => "size_t",
            "bool" => "bool",
            "" => "void",
            other => other,
        }
        .to_owned()
    };
    normalise(&c)
}

/// Splits `a: T, b: U` at top-level commas into the types.
fn rust_param_types(params: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    let bytes = params.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'<' => depth += 1,
            b')' | b'>' => depth -= 1,
            b',' if depth == 0 => {
                out.push(&params[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&params[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (_, ty) = p.split_once(':').expect("a parameter has a type");
            c_of_rust(ty)
        })
        .collect()
}

/// Every `pub unsafe extern "C" fn` in `src/`.
fn rust_functions() -> BTreeMap<String, Signature> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(root().join("src")).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        for piece in text.split("extern \"C\" fn ").skip(1) {
            let open = piece.find('(').unwrap();
            let name = piece[..open].trim().to_owned();
            if !name.starts_with("frontier_") {
                continue;
            }
            let body = piece.find('{').unwrap();
            let close = piece[..body].rfind(')').unwrap();
            let ret = piece[close + 1..body]
                .trim()
                .strip_prefix("->")
                .unwrap_or("")
                .to_owned();
            let params = rust_param_types(&piece[open + 1..close]);
            out.insert(name, (c_of_rust(&ret), params));
        }
    }
    out
}

fn header() -> String {
    fs::read_to_string(root().join("include/frontier.h")).unwrap()
}

#[test]
fn every_prototype_matches_an_extern_c_function_and_back() {
    let header = header_functions(&header());
    let rust = rust_functions();
    assert_eq!(
        header.len(),
        28,
        "the spec's 25 functions, frontier_matcher_fill_masks, _accept_tokens and _is_error: {:?}",
        header.keys()
    );
    for (name, signature) in &header {
        assert_eq!(rust.get(name), Some(signature), "{name}: header vs src/");
    }
    for name in rust.keys() {
        assert!(
            header.contains_key(name),
            "{name} is in src/ but not in the header"
        );
    }
}

/// `type a; type b;` pairs inside `typedef struct NAME { ... }`, normalised.
fn header_struct_fields(header: &str, name: &str) -> Vec<(String, String)> {
    let header = strip_c_comments(header);
    let start = header.find(&format!("typedef struct {name} {{")).unwrap();
    let body = &header[header[start..].find('{').unwrap() + start + 1..];
    let body = &body[..body.find('}').unwrap()];
    body.split(';')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| {
            let ty = c_param_type(f);
            let field = f
                .rsplit(|c: char| c == '*' || c.is_whitespace())
                .next()
                .unwrap();
            (field.to_owned(), ty)
        })
        .collect()
}

#[test]
fn the_init_struct_has_the_same_fields_in_the_same_order() {
    let header = header_struct_fields(&header(), "FrontierVocabInit");
    let source = fs::read_to_string(root().join("src/vocab.rs")).unwrap();
    let start = source.find("pub struct FrontierVocabInit {").unwrap();
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    let rust: Vec<(String, String)> = body
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| {
            let (name, ty) = f.trim_start_matches("pub ").split_once(':').unwrap();
            (name.trim().to_owned(), c_of_rust(ty))
        })
        .collect();
    assert_eq!(header, rust);
    assert!(source.contains("#[repr(C)]\npub struct FrontierVocabInit"));
}

#[test]
fn the_event_callback_has_the_same_parameters() {
    let header = strip_c_comments(&header());
    let at = header.find("(*FrontierEventCallback)(").unwrap();
    let params = &header[at + "(*FrontierEventCallback)(".len()..];
    let params = split_params(&params[..params.find(')').unwrap()]);
    assert!(header[..at].trim_end().ends_with("typedef void"));
    let source = fs::read_to_string(root().join("src/parser.rs")).unwrap();
    let at = source.find("unsafe extern \"C\" fn(").unwrap();
    let rest = &source[at + "unsafe extern \"C\" fn(".len()..];
    let rust = rust_param_types(&rest[..rest.find(")>").unwrap()]);
    assert_eq!(params, rust);
}
