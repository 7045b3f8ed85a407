//! A stdio server's stdout, sorted into JSON-RPC messages for rmcp and everything else for the
//! log, read in chunks of any size. No panic; every line that goes to rmcp looks like a JSON-RPC
//! message; a line over the limit is dropped whole, never passed on cut; nothing is invented.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_mcp::stdout::{looks_like_json_rpc, Line, LineSorter};

const LIMIT: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(*first % 32) + 1;
    let mut sorter = LineSorter::new(LIMIT);
    let mut kept = 0usize;
    for piece in rest.chunks(chunk) {
        let mut piece = piece;
        while !piece.is_empty() {
            let (taken, line) = sorter.feed(piece);
            assert!(taken > 0 && taken <= piece.len());
            piece = &piece[taken..];
            match line {
                Some(Line::Message(bytes)) => {
                    assert!(looks_like_json_rpc(&bytes));
                    assert!(bytes.len() <= LIMIT && bytes.ends_with(b"\n"));
                    kept += bytes.len();
                }
                Some(Line::Other(bytes)) => {
                    assert!(!looks_like_json_rpc(&bytes));
                    assert!(bytes.len() <= LIMIT);
                    kept += bytes.len();
                }
                Some(Line::TooLong) | None => {}
            }
        }
    }
    assert!(kept <= rest.len());
});
