//! What loading glTF holds at its peak, against the file's size and the caller's limit: the
//! issue 33 cases of a 200,000-node parent chain and of 500,000 small nodes. Debug builds are
//! slow: there the cases are a tenth of the size (20,000 and 50,000 nodes), in release
//! the whole.

#[allow(dead_code)]
mod counting_alloc;
mod json_cases;

use counting_alloc::peak_of;
use json_cases::{gltf_chain as chain, gltf_small_nodes as small_nodes, least_limit};
use ossa::{ErrorCode, Format, LoadOptions, Model};

#[global_allocator]
static ALLOCATOR: counting_alloc::Counting = counting_alloc::Counting;

fn size(release: usize) -> usize {
    if cfg!(debug_assertions) {
        release / 10
    } else {
        release
    }
}

fn options(max_bytes: u64) -> LoadOptions<'static> {
    LoadOptions {
        format: Format::Gltf,
        max_bytes,
        ..LoadOptions::default()
    }
}

/// Loads `text`, returning the result and the most heap the load held at once.
fn measure(what: &str, text: &str, max_bytes: u64) -> (ossa::Result<Model>, usize) {
    let (r, peak) = peak_of(|| Model::load(text.as_bytes(), &options(max_bytes)));
    eprintln!(
        "{what}: {} bytes of glTF, max_bytes {max_bytes}: {} at {peak} bytes of heap at most \
         ({:.1}x the file)",
        text.len(),
        match &r {
            Ok(m) => format!("{} bones", m.bones().len()),
            Err(e) => format!("{:?}", e.code()),
        },
        peak as f64 / text.len() as f64
    );
    (r, peak)
}

fn bound(file: usize) -> usize {
    12 * file + (16 << 20)
}

#[test]
fn a_long_parent_chain_stays_within_the_bound() {
    let n = size(200_000);
    let text = chain(n);
    let (r, peak) = measure("chain", &text, 0);
    let m = r.unwrap();
    assert_eq!(m.bones().len(), n);
    assert!(
        peak <= bound(text.len()),
        "{peak} bytes of heap, more than {}",
        bound(text.len())
    );
}

#[test]
fn many_small_nodes_stay_within_the_bound() {
    let n = size(500_000);
    let text = small_nodes(n);
    let (r, peak) = measure("small nodes", &text, 0);
    let m = r.unwrap();
    assert_eq!(m.bones().len(), n);
    assert!(
        peak <= bound(text.len()),
        "{peak} bytes of heap, more than {}",
        bound(text.len())
    );
}

#[test]
fn a_chain_under_a_64_mb_limit_is_refused_or_fits() {
    let n = size(200_000);
    let text = chain(n);
    let limit = if cfg!(debug_assertions) {
        64 << 20 >> 3
    } else {
        64 << 20
    };
    let (r, peak) = measure("chain", &text, limit);
    if let Err(e) = &r {
        assert_eq!(e.code(), ErrorCode::Limit, "{e}");
    }
    assert!(
        peak as u64 <= limit + limit / 4,
        "{peak} bytes of heap, more than 1.25x the limit of {limit}"
    );
}

#[test]
fn a_limit_just_below_what_a_file_needs_refuses_it_and_one_at_it_loads() {
    for (what, text) in [
        ("chain", chain(size(200_000))),
        ("small nodes", small_nodes(size(500_000))),
    ] {
        let needs = least_limit(what, |limit| Model::load(text.as_bytes(), &options(limit)));
        let (r, peak) = measure(what, &text, needs - 1);
        assert_eq!(r.unwrap_err().code(), ErrorCode::Limit);
        assert!(
            peak as u64 <= needs,
            "{what}: {peak} bytes of heap, above the limit"
        );
        let (r, peak) = measure(what, &text, needs);
        r.unwrap();
        assert!(
            peak as u64 <= needs,
            "{what}: {peak} bytes of heap, more than the limit of {needs}"
        );
    }
}

#[test]
fn a_refusal_before_parsing_names_what_it_counted() {
    let text = chain(1000);
    let e = Model::load(text.as_bytes(), &options(1000)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    let m = e.to_string();
    assert!(m.contains("the glTF JSON (3007 values: 1003 objects, 1002 arrays, 1006 strings of 8028 bytes) needs "), "{m}");
    assert!(m.contains("limit of 1000 bytes"), "{m}");
}

/// load_glb found it: a bind pose beyond range and a key at 307 s. The load fails on the bind
/// pose, as it did, but now before the 9,217 frames of the animation are sampled (2.3 MB held
/// for 4.9 KB of file; now a few KB).
#[test]
fn a_bind_pose_out_of_range_fails_before_its_animations_are_sampled() {
    use base64::Engine;
    let mut bin = Vec::new();
    for x in [0.0f32, 307.2, 0., 0., 0., 1., 0., 0., 1., 0.] {
        bin.extend(x.to_le_bytes());
    }
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    );
    let doc = serde_json::json!({
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"translation": [4e34, 0, 0], "children": [1]}, {"children": [2]}, {}],
        "buffers": [{"byteLength": 40, "uri": uri}],
        "bufferViews": [{"buffer": 0, "byteLength": 8}, {"buffer": 0, "byteOffset": 8, "byteLength": 32}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [307.2]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC4"},
        ],
        "animations": [{"channels": [{"sampler": 0, "target": {"node": 1, "path": "rotation"}}],
                        "samplers": [{"input": 0, "output": 1}]}],
    });
    let text = serde_json::to_string(&doc).unwrap();
    let (r, peak) = measure("bind beyond range", &text, 0);
    let e = r.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    assert!(
        e.to_string()
            .contains("frame 0 (bind) bone 0 (node_0): its model-space pose"),
        "{e}"
    );
    assert!(peak < 64 << 10, "{peak} bytes of heap");
}
