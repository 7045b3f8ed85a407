//! The OpenAI Chat Completions stream: SSE framing, then the assembler, as the provider reads a reply
//! (see `toolgate_fuzz::check_stream` for what is checked).
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_llm::openai::StreamAssembler;

fuzz_target!(|data: &[u8]| {
    toolgate_fuzz::check_stream(
        data,
        StreamAssembler::new(),
        StreamAssembler::push,
        StreamAssembler::finish,
    );
});
