#![no_main]
// Posing and skinning calls through the C ABI, checked against the Rust API (see ossa_fuzz::pose_skin).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::pose_skin::run(data));
