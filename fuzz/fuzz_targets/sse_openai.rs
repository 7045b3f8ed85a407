//! The OpenAI Chat Completions stream: SSE framing, then the assembler, as the provider reads a reply.
//! Whatever the bytes, no panic, and a reply that finishes holds exactly the text the deltas
//! announced (what the window showed is what is kept).
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_llm::openai::StreamAssembler;
use toolgate_llm::StreamDelta;

fuzz_target!(|data: &[u8]| {
    let Some(events) = toolgate_fuzz::sse_events(data) else {
        return;
    };
    let mut assembler = StreamAssembler::new();
    let mut streamed = String::new();
    for (name, data) in &events {
        let mut emit = |delta: StreamDelta| {
            if let StreamDelta::Text(text) = delta {
                streamed.push_str(&text);
            }
        };
        match assembler.push(name, data, &mut emit) {
            Ok(true) => break,
            Ok(false) => {}
            Err(_) => return,
        }
    }
    if let Ok(reply) = assembler.finish() {
        assert_eq!(
            reply.text, streamed,
            "the reply's text is what was streamed"
        );
    }
});
