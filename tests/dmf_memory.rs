//! What loading DMF JSON holds at its peak, against the file's size: the issue 33 case of
//! 500,000 vertex objects each with a member DMF 1.5 does not define.

#[allow(dead_code)]
mod counting_alloc;
mod json_cases;

use counting_alloc::peak_of;
use json_cases::dmf_vertices_with_an_unknown_key as vertices_with_an_unknown_key;
use ossa::{Format, LoadOptions, Model};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

#[test]
fn unknown_keys_per_vertex_cost_no_tree() {
    // Debug builds are slow: a tenth of the size there, the whole in release.
    let n = if cfg!(debug_assertions) {
        50_000
    } else {
        500_000
    };
    let text = vertices_with_an_unknown_key(n);
    let options = LoadOptions {
        format: Format::DmfJson,
        ..LoadOptions::default()
    };
    let (r, peak) = peak_of(|| Model::load(text.as_bytes(), &options));
    let m = r.unwrap();
    assert_eq!(m.warnings().len(), 2, "{:?}", m.warnings());
    let bound = 12 * text.len() + (16 << 20);
    eprintln!(
        "{} bytes of DMF JSON ({n} vertices): {peak} bytes of heap at most ({:.1}x), bound {bound}",
        text.len(),
        peak as f64 / text.len() as f64
    );
    assert!(peak <= bound, "{peak} bytes of heap, more than {bound}");
}
