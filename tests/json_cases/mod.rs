//! Dense JSON documents of the issue 33 cases, shared by the in-process memory tests and the
//! child-process ones: a glTF parent chain, a glTF of many small nodes, DMF JSON vertices with
//! a member DMF 1.5 does not define.
#![allow(dead_code)]

/// A glTF skeleton of `n` nodes, each the only child of the one before: `{"children":[i+1]}`.
pub fn gltf_chain(n: usize) -> String {
    let mut text =
        String::from(r#"{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":["#);
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        if i + 1 < n {
            text.push_str(&format!(r#"{{"children":[{}]}}"#, i + 1));
        } else {
            text.push_str("{}");
        }
    }
    text.push_str("]}");
    text
}

/// A glTF skeleton of `n` small root nodes, each named and placed.
pub fn gltf_small_nodes(n: usize) -> String {
    let mut text = String::from(r#"{"asset":{"version":"2.0"},"nodes":["#);
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"name":"n{i}","translation":[{},0,1]}}"#,
            i % 10
        ));
    }
    text.push_str("]}");
    text
}

/// A DMF JSON document of `n` vertex objects `{"pos":[0,0,0],"x":0}`, one bone, no faces.
pub fn dmf_vertices_with_an_unknown_key(n: usize) -> String {
    let mut text = String::from(r#"{"format":"DASH","version":"1.5","vertices":["#);
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(r#"{"pos":[0,0,0],"x":0}"#);
    }
    text.push_str("]}");
    text
}

/// The bytes a limit refusal says the load needs (`... needs N bytes ...`).
pub fn needed(e: &ossa::Error) -> u64 {
    let text = e.to_string();
    let after = text
        .split(" needs ")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    after.split(' ').next().unwrap().parse().unwrap()
}

/// The least `max_bytes` with which `load` succeeds: each refusal names what the load needed
/// up to the check that failed, and raising the limit to it lets the load go further.
pub fn least_limit(what: &str, load: impl Fn(u64) -> ossa::Result<ossa::Model>) -> u64 {
    let mut limit = 1u64;
    loop {
        match load(limit) {
            Ok(_) => return limit,
            Err(e) => {
                assert_eq!(e.code(), ossa::ErrorCode::Limit, "{what}: {e}");
                assert!(
                    e.to_string().contains(&format!("limit of {limit} bytes")),
                    "{e}"
                );
                let n = needed(&e);
                assert!(n > limit, "{what}: {e}");
                limit = n;
            }
        }
    }
}
