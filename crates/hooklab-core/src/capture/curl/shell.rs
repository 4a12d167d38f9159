//! The part of POSIX shell (bash) syntax that curl command lines use: words in single quotes,
//! double quotes, `$'…'` ANSI-C quotes and backslash escapes, `\` line continuations,
//! comments, and commands separated by newlines, `;`, `&&` or `||`, with `|` pipelines. Words
//! are bytes (`$'\xff'` is one byte that is not UTF-8). Nothing is expanded: `$VAR` stays as
//! written. Also the writing side: quoting bytes so that bash gives them back exactly.

use super::super::CaptureError;

/// One shell word and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub(crate) bytes: Vec<u8>,
    /// Byte offset of the word's first character in the input.
    pub(crate) offset: usize,
}

/// One command line: its pipeline's commands (`a | b` is two), each a list of words.
pub(crate) type Pipeline = Vec<Vec<Word>>;

/// `line L, column C` (1-based) of a byte offset.
pub(crate) fn position(input: &[u8], offset: usize) -> String {
    let before = &input[..offset.min(input.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    format!("line {line}, column {column}")
}

fn error(input: &[u8], offset: usize, detail: impl std::fmt::Display) -> CaptureError {
    CaptureError::new("curl", format!("{detail} at {}", position(input, offset)))
}

/// Splits `input` into command lines.
pub(crate) fn split(input: &[u8]) -> Result<Vec<Pipeline>, CaptureError> {
    let mut lines: Vec<Pipeline> = Vec::new();
    let mut pipeline: Pipeline = Vec::new();
    let mut command: Vec<Word> = Vec::new();
    let mut i = 0;
    let end_command = |pipeline: &mut Pipeline, command: &mut Vec<Word>| {
        if !command.is_empty() {
            pipeline.push(std::mem::take(command));
        }
    };
    while i < input.len() {
        match input[i] {
            b' ' | b'\t' | b'\r' => i += 1,
            b'\\' if input.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' if input[i + 1..].starts_with(b"\r\n") => i += 3,
            b'\n' | b';' => {
                end_command(&mut pipeline, &mut command);
                if !pipeline.is_empty() {
                    lines.push(std::mem::take(&mut pipeline));
                }
                i += 1;
            }
            b'&' if input.get(i + 1) == Some(&b'&') => {
                end_command(&mut pipeline, &mut command);
                if !pipeline.is_empty() {
                    lines.push(std::mem::take(&mut pipeline));
                }
                i += 2;
            }
            b'|' if input.get(i + 1) == Some(&b'|') => {
                end_command(&mut pipeline, &mut command);
                if !pipeline.is_empty() {
                    lines.push(std::mem::take(&mut pipeline));
                }
                i += 2;
            }
            b'|' => {
                if command.is_empty() {
                    return Err(error(input, i, "a `|` with no command before it"));
                }
                end_command(&mut pipeline, &mut command);
                i += 1;
            }
            b'&' | b'<' | b'>' | b'(' | b')' | b'`' => {
                return Err(error(
                    input,
                    i,
                    format!(
                        "`{}` (a redirection, subshell or background job) is not supported",
                        input[i] as char
                    ),
                ));
            }
            b'#' => {
                while i < input.len() && input[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {
                let (word, next) = word(input, i)?;
                command.push(word);
                i = next;
            }
        }
    }
    end_command(&mut pipeline, &mut command);
    if !pipeline.is_empty() {
        lines.push(pipeline);
    }
    Ok(lines)
}

/// Reads one word starting at `start`; returns it and the offset after it.
fn word(input: &[u8], start: usize) -> Result<(Word, usize), CaptureError> {
    let mut out = Vec::new();
    let mut i = start;
    while i < input.len() {
        match input[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b';' | b'|' | b'&' | b'<' | b'>' | b'(' | b')' => {
                break;
            }
            b'\\' => match input.get(i + 1) {
                Some(b'\n') => i += 2,
                Some(b'\r') if input.get(i + 2) == Some(&b'\n') => i += 3,
                Some(&c) => {
                    out.push(c);
                    i += 2;
                }
                None => {
                    out.push(b'\\');
                    i += 1;
                }
            },
            b'\'' => {
                let close = find(input, i + 1, b'\'')
                    .ok_or_else(|| error(input, i, "unbalanced quote `'`"))?;
                out.extend_from_slice(&input[i + 1..close]);
                i = close + 1;
            }
            b'$' if input.get(i + 1) == Some(&b'\'') => {
                i = ansi_c(input, i, &mut out)?;
            }
            b'$' if input.get(i + 1) == Some(&b'"') => {
                i = double_quoted(input, i + 1, &mut out)?;
            }
            b'"' => {
                i = double_quoted(input, i, &mut out)?;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok((
        Word {
            bytes: out,
            offset: start,
        },
        i,
    ))
}

fn find(input: &[u8], from: usize, byte: u8) -> Option<usize> {
    input[from..]
        .iter()
        .position(|&b| b == byte)
        .map(|p| from + p)
}

/// `"…"` starting at `open`: `\` escapes only `$`, `` ` ``, `"`, `\` and a newline.
fn double_quoted(input: &[u8], open: usize, out: &mut Vec<u8>) -> Result<usize, CaptureError> {
    let mut i = open + 1;
    loop {
        match input.get(i) {
            None => return Err(error(input, open, "unbalanced quote `\"`")),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => match input.get(i + 1) {
                Some(b'\n') => i += 2,
                Some(&c @ (b'$' | b'`' | b'"' | b'\\')) => {
                    out.push(c);
                    i += 2;
                }
                _ => {
                    out.push(b'\\');
                    i += 1;
                }
            },
            Some(&c) => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// `$'…'` starting at the `$`: bash's ANSI-C escapes.
fn ansi_c(input: &[u8], dollar: usize, out: &mut Vec<u8>) -> Result<usize, CaptureError> {
    let mut i = dollar + 2;
    let digits = |from: usize, max: usize, radix: u32| -> (u32, usize) {
        let mut value = 0u32;
        let mut n = 0;
        while n < max {
            match input
                .get(from + n)
                .and_then(|&b| (b as char).to_digit(radix))
            {
                Some(d) => {
                    value = value * radix + d;
                    n += 1;
                }
                None => break,
            }
        }
        (value, n)
    };
    loop {
        let Some(&c) = input.get(i) else {
            return Err(error(input, dollar, "unbalanced quote `$'`"));
        };
        match c {
            b'\'' => return Ok(i + 1),
            b'\\' => {
                let Some(&e) = input.get(i + 1) else {
                    return Err(error(input, dollar, "unbalanced quote `$'`"));
                };
                i += 2;
                match e {
                    b'a' => out.push(0x07),
                    b'b' => out.push(0x08),
                    b'e' | b'E' => out.push(0x1b),
                    b'f' => out.push(0x0c),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'v' => out.push(0x0b),
                    b'\\' | b'\'' | b'"' | b'?' => out.push(e),
                    b'0'..=b'7' => {
                        let (value, n) = digits(i - 1, 3, 8);
                        out.push((value & 0xff) as u8);
                        i += n - 1;
                    }
                    b'x' => {
                        let (value, n) = digits(i, 2, 16);
                        if n == 0 {
                            out.extend_from_slice(b"\\x");
                        } else {
                            out.push(value as u8);
                            i += n;
                        }
                    }
                    b'u' | b'U' => {
                        let (value, n) = digits(i, if e == b'u' { 4 } else { 8 }, 16);
                        match char::from_u32(value).filter(|_| n > 0) {
                            Some(ch) => {
                                out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                                i += n;
                            }
                            None if n == 0 => out.extend_from_slice(&[b'\\', e]),
                            None => {
                                return Err(error(
                                    input,
                                    i - 2,
                                    format!("`\\{}` is not a character", e as char),
                                ));
                            }
                        }
                    }
                    b'c' => {
                        let Some(&x) = input.get(i) else {
                            return Err(error(input, dollar, "unbalanced quote `$'`"));
                        };
                        out.push(x & 0x1f);
                        i += 1;
                    }
                    other => out.extend_from_slice(&[b'\\', other]),
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// `bytes` as one shell word that bash reads back exactly: `'…'` for printable text, `$'…'`
/// with escapes when a byte is a control character or not UTF-8. NUL cannot be passed in an
/// argument at all; callers keep such bytes out of words (see [`printf_format`]).
pub(crate) fn quote(bytes: &[u8]) -> String {
    let plain = std::str::from_utf8(bytes).ok().filter(|text| {
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
    });
    if let Some(text) = plain {
        return format!("'{}'", text.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str(r"\\"),
                '\'' => out.push_str(r"\'"),
                '\n' => out.push_str(r"\n"),
                '\r' => out.push_str(r"\r"),
                '\t' => out.push_str(r"\t"),
                c if c.is_control() => {
                    let mut buf = [0; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('\'');
    out
}

/// `bytes` as a `printf` format that prints them exactly (for bodies holding NUL, which no
/// argument can): printable ASCII as is, `%` as `%%`, `\` as `\\`, everything else `\ooo`.
pub(crate) fn printf_format(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        match b {
            b'%' => out.push_str("%%"),
            b'\\' => out.push_str(r"\\"),
            b' '..=b'~' => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

/// What `printf FORMAT` prints (no arguments): escapes `\\ \a \b \f \n \r \t \v \ooo \xHH`
/// and `%%`; any other `%` needs arguments and is refused.
pub(crate) fn printf(format: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(format.len());
    let mut i = 0;
    while i < format.len() {
        match format[i] {
            b'%' if format.get(i + 1) == Some(&b'%') => {
                out.push(b'%');
                i += 2;
            }
            b'%' => return Err("printf with a conversion (`%s`…) is not supported".into()),
            b'\\' => {
                let Some(&e) = format.get(i + 1) else {
                    out.push(b'\\');
                    break;
                };
                i += 2;
                match e {
                    b'\\' => out.push(b'\\'),
                    b'a' => out.push(0x07),
                    b'b' => out.push(0x08),
                    b'f' => out.push(0x0c),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'v' => out.push(0x0b),
                    b'"' => out.push(b'"'),
                    b'0'..=b'7' => {
                        let mut value = u32::from(e - b'0');
                        let mut n = 1;
                        while n < 3 {
                            match format.get(i).filter(|b| (b'0'..=b'7').contains(b)) {
                                Some(&d) => {
                                    value = value * 8 + u32::from(d - b'0');
                                    i += 1;
                                    n += 1;
                                }
                                None => break,
                            }
                        }
                        out.push((value & 0xff) as u8);
                    }
                    b'x' => {
                        let mut value = 0u32;
                        let mut n = 0;
                        while n < 2 {
                            match format.get(i).and_then(|&b| (b as char).to_digit(16)) {
                                Some(d) => {
                                    value = value * 16 + d;
                                    i += 1;
                                    n += 1;
                                }
                                None => break,
                            }
                        }
                        if n == 0 {
                            out.extend_from_slice(b"\\x");
                        } else {
                            out.push(value as u8);
                        }
                    }
                    other => out.extend_from_slice(&[b'\\', other]),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}
