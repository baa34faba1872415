//! GLB containers made and taken apart by hand, for tests that build glTF files themselves.
#![allow(dead_code)]

use serde_json::Value;

/// A GLB of `json` and `bin`, padded as the specification asks.
pub fn glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + if b.is_empty() { 0 } else { 8 + b.len() };
    let mut out = Vec::new();
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((j.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(j);
    if !b.is_empty() {
        out.extend((b.len() as u32).to_le_bytes());
        out.extend(b"BIN\0");
        out.extend(b);
    }
    out
}

/// The JSON chunk of a GLB.
pub fn glb_json(bytes: &[u8]) -> Value {
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[20..20 + len]).unwrap()
}

/// The BIN chunk of a GLB (empty where it has none).
pub fn glb_bin(bytes: &[u8]) -> &[u8] {
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    bytes.get(20 + len + 8..).unwrap_or(&[])
}
