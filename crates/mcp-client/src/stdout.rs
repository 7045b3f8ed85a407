//! A stdio server's stdout, sorted line by line: JSON-RPC messages go to rmcp, anything else
//! (banners, debug prints, JSON log lines) to the server's log, and a line longer than the limit
//! is dropped whole so a server that never ends its line cannot take all memory.
//!
//! Pure and incremental, so it can be fuzzed (`fuzz/fuzz_targets/stdout_filter.rs`): the caller
//! reads whatever the pipe has and feeds it here until the chunk is used up.

/// One finished line of output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A JSON-RPC message, with its newline, for rmcp.
    Message(Vec<u8>),
    /// Not JSON-RPC: for the log.
    Other(Vec<u8>),
    /// A line longer than the limit, dropped whole.
    TooLong,
}

/// Collects one line at a time from chunks of output.
#[derive(Debug)]
pub struct LineSorter {
    line: Vec<u8>,
    oversized: bool,
    limit: usize,
}

impl LineSorter {
    /// A sorter that drops lines longer than `limit` bytes (newline included).
    pub fn new(limit: usize) -> Self {
        Self {
            line: Vec::new(),
            oversized: false,
            limit,
        }
    }

    /// Takes bytes of `chunk` up to and including its first newline (all of it when there is
    /// none), and returns how many it took, with the line that ended, if one did. Never takes
    /// nothing from a non-empty chunk.
    pub fn feed(&mut self, chunk: &[u8]) -> (usize, Option<Line>) {
        let newline = chunk.iter().position(|b| *b == b'\n');
        let take = newline.map_or(chunk.len(), |i| i + 1);
        if !self.oversized && self.line.len() + take > self.limit {
            self.oversized = true;
            self.line = Vec::new();
        }
        if !self.oversized {
            self.line.extend_from_slice(&chunk[..take]);
        }
        if newline.is_none() {
            return (take, None);
        }
        if std::mem::take(&mut self.oversized) {
            return (take, Some(Line::TooLong));
        }
        let line = std::mem::take(&mut self.line);
        if looks_like_json_rpc(&line) {
            (take, Some(Line::Message(line)))
        } else {
            (take, Some(Line::Other(line)))
        }
    }
}

/// A cheap test that keeps every JSON-RPC message (an object, or a batch, naming `"jsonrpc"`) and
/// drops the log lines and banners servers print by mistake, JSON loggers' lines included (rmcp
/// would answer those with an error, which a server might log again). Malformed JSON that passes
/// is skipped by rmcp.
pub fn looks_like_json_rpc(line: &[u8]) -> bool {
    let trimmed = line.trim_ascii();
    matches!(
        (trimmed.first(), trimmed.last()),
        (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']'))
    ) && trimmed.windows(9).any(|w| w == b"\"jsonrpc\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_rpc_lines_pass_and_prints_do_not() {
        assert!(looks_like_json_rpc(b"{\"jsonrpc\":\"2.0\"}\n"));
        assert!(looks_like_json_rpc(b"  [{\"jsonrpc\":\"2.0\"}]  \r\n"));
        assert!(!looks_like_json_rpc(
            b"{\"level\":30,\"msg\":\"listening\"}\n"
        ));
        assert!(!looks_like_json_rpc(b"hello from a debug print\n"));
        assert!(!looks_like_json_rpc(b"{not json\n"));
        assert!(!looks_like_json_rpc(b"\n"));
    }

    fn sort_all(sorter: &mut LineSorter, mut bytes: &[u8]) -> Vec<Line> {
        let mut lines = Vec::new();
        while !bytes.is_empty() {
            let (taken, line) = sorter.feed(bytes);
            bytes = &bytes[taken..];
            lines.extend(line);
        }
        lines
    }

    #[test]
    fn lines_split_across_chunks_are_joined_and_long_ones_dropped_whole() {
        let mut sorter = LineSorter::new(32);
        let mut lines = sort_all(&mut sorter, b"banner\n{\"jsonrpc\":");
        lines.extend(sort_all(&mut sorter, b"\"2.0\"}\n"));
        lines.extend(sort_all(&mut sorter, &[b'x'; 40]));
        lines.extend(sort_all(&mut sorter, b"yy\n{\"jsonrpc\":1}\n"));
        assert_eq!(
            lines,
            vec![
                Line::Other(b"banner\n".to_vec()),
                Line::Message(b"{\"jsonrpc\":\"2.0\"}\n".to_vec()),
                Line::TooLong,
                Line::Message(b"{\"jsonrpc\":1}\n".to_vec()),
            ]
        );
    }
}
