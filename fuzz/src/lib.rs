//! What the fuzz targets share: turning bytes into the shapes Toolgate reads them in.

use eventsource_stream::Eventsource;
use futures::StreamExt;
use toolgate_llm::{LlmError, Reply, StreamDelta};

/// The server-sent events in `data`, framed by the same `eventsource-stream` the HTTP provider
/// uses, fed to it in small chunks so that events split across reads are exercised. `None` when
/// the framing itself fails (the provider reports that as a malformed stream).
pub fn sse_events(data: &[u8]) -> Option<Vec<(String, String)>> {
    // The first byte picks the chunk size, so the fuzzer explores different splits.
    let (size, body) = match data.split_first() {
        Some((first, rest)) => (usize::from(*first % 16) + 1, rest),
        None => (1, data),
    };
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        body.chunks(size).map(|c| Ok(c.to_vec())).collect();
    let mut events = futures::stream::iter(chunks).eventsource();
    futures::executor::block_on(async {
        let mut out = Vec::new();
        while let Some(event) = events.next().await {
            let event = event.ok()?;
            out.push((event.event, event.data));
        }
        Some(out)
    })
}

/// The fuzzer's bytes as text, or nothing: every reader here takes text.
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A stream assembler's `push`: one event's name and data in, deltas out, whether it is done.
pub type Push<A> = fn(&mut A, &str, &str, &mut dyn FnMut(StreamDelta)) -> Result<bool, LlmError>;

/// Feeds `data`'s events to a provider's stream assembler as the HTTP provider does, and checks
/// what every assembler promises: no panic, and a reply that finishes holds exactly the text the
/// deltas announced (what the window showed is what is kept).
pub fn check_stream<A>(
    data: &[u8],
    mut assembler: A,
    push: Push<A>,
    finish: fn(A) -> Result<Reply, LlmError>,
) {
    let Some(events) = sse_events(data) else {
        return;
    };
    let mut streamed = String::new();
    for (name, data) in &events {
        let mut emit = |delta: StreamDelta| {
            if let StreamDelta::Text(text) = delta {
                streamed.push_str(&text);
            }
        };
        match push(&mut assembler, name, data, &mut emit) {
            Ok(true) => break,
            Ok(false) => {}
            Err(_) => return,
        }
    }
    if let Ok(reply) = finish(assembler) {
        assert_eq!(
            reply.text, streamed,
            "the reply's text is what was streamed"
        );
    }
}
