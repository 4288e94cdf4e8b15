//! Screening of newline-delimited JSON-RPC before the MCP SDK sees it. A
//! line that is not one well-formed JSON-RPC message — invalid UTF-8, not
//! JSON, nested past serde_json's depth limit, trailing garbage, a lone
//! surrogate, longer than `MAX_LINE_BYTES` — gets the JSON-RPC answer for it
//! (-32700 parse error or -32600 invalid request) and the session carries
//! on; left to the SDK's stdio codec, one bad byte ended the session, and
//! with it the server of every attached client.

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest message accepted on a line transport (the HTTP transport's
/// body limit is the same).
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Screened {
    /// A well-formed message: pass it on.
    Forward(String),
    /// Answer this (a JSON-RPC error response) instead.
    Refuse(String),
}

/// One line as read: its bytes, or the fact that it was over the limit.
pub enum Line {
    Bytes(Vec<u8>),
    TooLong,
}

fn refusal(code: i64, message: &str, id: Value) -> Screened {
    Screened::Refuse(
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            .to_string(),
    )
}

/// Screens one line; `None` for a blank one (ignored, as the SDK does).
pub fn screen(line: Line) -> Option<Screened> {
    let bytes = match line {
        Line::TooLong => {
            return Some(refusal(
                -32700,
                &format!("Parse error: the message is over {MAX_LINE_BYTES} bytes"),
                Value::Null,
            ));
        }
        Line::Bytes(bytes) => bytes,
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Some(refusal(
            -32700,
            "Parse error: the message is not valid UTF-8",
            Value::Null,
        ));
    };
    let text = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if text.is_empty() {
        return None;
    }
    // serde_json refuses nesting deeper than 128 without recursing further.
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return Some(refusal(-32700, &format!("Parse error: {e}"), Value::Null)),
    };
    let Value::Object(message) = &value else {
        return Some(refusal(
            -32600,
            "Invalid Request: a message must be one JSON object",
            Value::Null,
        ));
    };
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let id_ok = matches!(id, Value::Null | Value::String(_) | Value::Number(_));
    let version_ok = message.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let kind_ok = match message.get("method") {
        Some(method) => method.is_string(),
        // A response to a server request (sampling, elicitation, ping).
        None => message.contains_key("result") || message.contains_key("error"),
    };
    if !id_ok || !version_ok || !kind_ok {
        return Some(refusal(
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
            if id_ok { id } else { Value::Null },
        ));
    }
    Some(Screened::Forward(text.to_string()))
}

/// Reads lines of at most `MAX_LINE_BYTES`; a longer one is skipped to its
/// end and reported as `Line::TooLong`, never held in memory.
pub struct LineReader<R> {
    inner: R,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R) -> Self {
        LineReader { inner }
    }

    /// The next line without its newline, or `None` at the end of input.
    pub async fn next(&mut self) -> std::io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(match (too_long, line.is_empty()) {
                    (true, _) => Some(Line::TooLong),
                    (false, true) => None,
                    (false, false) => Some(Line::Bytes(line)),
                });
            }
            let (taken, done) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            if !too_long && line.len() + taken <= MAX_LINE_BYTES {
                line.extend_from_slice(&available[..taken]);
            } else {
                too_long = true;
                line = Vec::new();
            }
            self.inner.consume(taken + usize::from(done));
            if done {
                return Ok(Some(if too_long {
                    Line::TooLong
                } else {
                    Line::Bytes(line)
                }));
            }
        }
    }
}

/// Puts screening between a client's byte stream and the MCP SDK: returns
/// the stream the SDK should serve. Well-formed lines reach it; the rest are
/// answered here; its answers go back to the client.
pub fn screened<S>(stream: S) -> tokio::io::DuplexStream
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (client_read, mut client_write) = tokio::io::split(stream);
    let (sdk_read, mut sdk_write) = tokio::io::split(ours);
    let (out, mut outgoing) = mpsc::unbounded_channel::<String>();
    let refusals = out.clone();
    tokio::spawn(async move {
        let mut lines = LineReader::new(BufReader::new(client_read));
        while let Ok(Some(line)) = lines.next().await {
            let delivered = match screen(line) {
                Some(Screened::Forward(message)) => {
                    let sent = async {
                        sdk_write.write_all(message.as_bytes()).await?;
                        sdk_write.write_all(b"\n").await?;
                        sdk_write.flush().await
                    };
                    sent.await.is_ok()
                }
                Some(Screened::Refuse(answer)) => refusals.send(answer).is_ok(),
                None => true,
            };
            if !delivered {
                break;
            }
        }
        // The client is gone: the SDK sees the end of its input.
        let _ = sdk_write.shutdown().await;
    });
    tokio::spawn(async move {
        let mut answers = BufReader::new(sdk_read);
        let mut line = String::new();
        loop {
            line.clear();
            match answers.read_line(&mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if out.send(line.trim_end_matches('\n').to_string()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    tokio::spawn(async move {
        while let Some(line) = outgoing.recv().await {
            let written = async {
                client_write.write_all(line.as_bytes()).await?;
                client_write.write_all(b"\n").await?;
                client_write.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
        let _ = client_write.shutdown().await;
    });
    theirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &[u8]) -> Option<i64> {
        match screen(Line::Bytes(line.to_vec()))? {
            Screened::Forward(_) => Some(0),
            Screened::Refuse(answer) => {
                let value: Value = serde_json::from_str(&answer).unwrap();
                Some(value["error"]["code"].as_i64().unwrap())
            }
        }
    }

    #[test]
    fn malformed_lines_get_their_json_rpc_error() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for (line, expected) in [
            (&b"\xff\xfe not utf-8"[..], Some(-32700)),
            (b"not json", Some(-32700)),
            (b"{", Some(-32700)),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\0",
                Some(-32700),
            ),
            (deep.as_bytes(), Some(-32700)),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing",
                Some(-32700),
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}}"#,
                Some(-32700),
            ),
            (b"[1, 2]", Some(-32600)),
            (b"42", Some(-32600)),
            (br#"{"id":1,"method":"ping"}"#, Some(-32600)),
            (
                br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                Some(-32600),
            ),
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, Some(0)),
            (
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                Some(0),
            ),
            (br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#, Some(0)),
            (b"   ", None),
        ] {
            assert_eq!(
                code(line),
                expected,
                "{}",
                String::from_utf8_lossy(&line[..line.len().min(60)])
            );
        }
        match screen(Line::TooLong) {
            Some(Screened::Refuse(answer)) => assert!(answer.contains("-32700")),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn long_lines_are_skipped_without_being_held() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\nnext\n");
        let mut lines = LineReader::new(BufReader::new(&input[..]));
        assert!(matches!(lines.next().await.unwrap(), Some(Line::TooLong)));
        match lines.next().await.unwrap() {
            Some(Line::Bytes(b)) => assert_eq!(b, b"next"),
            _ => panic!("the line after a long one is read"),
        }
        assert!(lines.next().await.unwrap().is_none());
    }
}
