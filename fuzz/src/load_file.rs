//! The load_file target: `ossa_load_file` (or `ossa_model_add_skills`) through the C ABI, with
//! the model and its sidecars served by a small in-memory filesystem through `ossa_file_io`,
//! links included, and a memory limit.
//!
//! Input: one flags byte, then entries to the end: a name byte, a little-endian u16 length and
//! that many bytes. The name byte's low bits pick a path from [`samples::LOAD_FILE_NAMES`]; its top bit makes the
//! entry a link whose bytes are the path it points to (links may chain, loop or point nowhere).
//! Flags: bit 0 strict; bits 1-3 the model path, from [`samples::LOAD_FILE_MODELS`]; bits 4-5 the memory
//! limit, from [`samples::LOAD_FILE_MAX_BYTES`]; bit 6 adds the file's skills to a skeleton instead of loading it.
//!
//! What must hold: ossa asks the filesystem only for paths inside it (no `..`, nothing
//! absolute); every successful read is released once; a model path outside the filesystem is
//! refused before anything is read; the call ends in a model or a clean error with a message,
//! holding no more memory at once than the limit allows; and a model that loaded poses and
//! skins to finite numbers at its first and last frames.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr;
use std::sync::OnceLock;

use ossa::capi::ossa_result::*;
use ossa::capi::*;

use crate::counting_alloc::{budget, peak_of};
use crate::samples::{
    self, LOAD_FILE_MAX_BYTES as MAX_BYTES, LOAD_FILE_MODELS as MODEL_PATHS,
    LOAD_FILE_NAMES as NAMES,
};

/// Links followed before a read gives up, as an OS does with a loop.
const MAX_HOPS: usize = 8;

struct Entry {
    name: &'static str,
    link: bool,
    bytes: Vec<u8>,
}

/// The in-memory filesystem and what ossa asked of it.
struct MemFs {
    entries: Vec<Entry>,
    reads: RefCell<Vec<String>>,
    open: RefCell<usize>,
}

impl MemFs {
    fn parse(mut data: &[u8]) -> MemFs {
        let mut entries = Vec::new();
        while let [name, lo, hi, rest @ ..] = data {
            let len = (u16::from_le_bytes([*lo, *hi]) as usize).min(rest.len());
            let (bytes, tail) = rest.split_at(len);
            entries.push(Entry {
                name: NAMES[(name & 0x7f) as usize % NAMES.len()],
                link: name & 0x80 != 0,
                bytes: bytes.to_vec(),
            });
            data = tail;
        }
        MemFs {
            entries,
            reads: RefCell::new(Vec::new()),
            open: RefCell::new(0),
        }
    }

    /// The file at `path` after links, the last entry of a name winning.
    fn find(&self, path: &str) -> Option<&[u8]> {
        let mut path = path.to_owned();
        for _ in 0..MAX_HOPS {
            let entry = self.entries.iter().rev().find(|e| e.name == path)?;
            if !entry.link {
                return Some(&entry.bytes);
            }
            path = String::from_utf8_lossy(&entry.bytes).into_owned();
        }
        None
    }
}

unsafe extern "C" fn read(
    user: *mut c_void,
    path: *const c_char,
    data: *mut *const u8,
    size: *mut usize,
    token: *mut *mut c_void,
) -> u32 {
    // SAFETY: `user` is the MemFs of `run`, alive for the call; ossa passes a C string.
    let (fs, path) = unsafe { (&*user.cast::<MemFs>(), CStr::from_ptr(path)) };
    let path = path.to_string_lossy().into_owned();
    assert!(
        ossa::io::is_contained(&path),
        "ossa asked the caller's filesystem for {path:?}, outside it"
    );
    fs.reads.borrow_mut().push(path.clone());
    let Some(bytes) = fs.find(&path) else {
        return OSSA_ERR_NOT_FOUND as u32;
    };
    *fs.open.borrow_mut() += 1;
    // SAFETY: the out-pointers are ossa's, writable for the call; the bytes live in `fs`, which
    // outlives the call that reads them.
    unsafe {
        *data = bytes.as_ptr();
        *size = bytes.len();
        *token = user;
    }
    OSSA_OK as u32
}

unsafe extern "C" fn release(user: *mut c_void, token: *mut c_void) {
    assert_eq!(user, token, "release got a token read did not give");
    // SAFETY: as in `read`.
    let fs = unsafe { &*user.cast::<MemFs>() };
    let mut open = fs.open.borrow_mut();
    assert!(*open > 0, "a release without a read");
    *open -= 1;
}

/// What the call may fail with: the files' fault, or (a model path outside) the caller's.
const CLEAN: [ossa_result; 8] = [
    OSSA_ERR_INVALID_ARGUMENT,
    OSSA_ERR_UNKNOWN_FORMAT,
    OSSA_ERR_TRUNCATED,
    OSSA_ERR_MALFORMED,
    OSSA_ERR_UNSUPPORTED,
    OSSA_ERR_LIMIT,
    OSSA_ERR_NOT_FOUND,
    OSSA_ERR_MISMATCH,
];

/// The skeleton that skills are added to: a tube of three bones, as the skills target uses.
fn skeleton() -> usize {
    static SKELETON: OnceLock<usize> = OnceLock::new();
    *SKELETON.get_or_init(|| {
        let dpm = ossa::dpm::write(&samples::tube(3, 3, 3)).expect("the tube saves as DPM");
        let mut out = ptr::null_mut();
        // SAFETY: valid pointers for the call; the handle is kept for the process.
        let code = unsafe {
            ossa_load_memory(
                dpm.as_ptr(),
                dpm.len(),
                ptr::null(),
                &mut out,
                ptr::null_mut(),
            )
        };
        assert_eq!(code, OSSA_OK as u32);
        out as usize
    })
}

pub fn run(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let fs = MemFs::parse(rest);
    let model_path = MODEL_PATHS[(flags >> 1) as usize % MODEL_PATHS.len()];
    let max_bytes = MAX_BYTES[(flags >> 4) as usize % MAX_BYTES.len()];
    let skills = flags & 0x40 != 0;
    let io = ossa_file_io {
        user: ptr::from_ref(&fs).cast_mut().cast(),
        read: Some(read),
        release: Some(release),
    };
    let mut options = std::mem::MaybeUninit::<ossa_load_options>::uninit();
    // SAFETY: init writes the whole struct.
    let mut options = unsafe {
        ossa_load_options_init(options.as_mut_ptr());
        options.assume_init()
    };
    options.flags = u32::from(flags & 1);
    options.max_bytes = max_bytes;
    options.io = &io;
    let path = CString::new(model_path).expect("no NUL");
    let mut out: *mut ossa_model = ptr::null_mut();
    let mut error = std::mem::MaybeUninit::<ossa_error>::zeroed();
    let (code, peak) = peak_of(|| {
        // SAFETY: every pointer is valid for the call; the skeleton handle lives for the process.
        unsafe {
            if skills {
                ossa_model_add_skills(
                    skeleton() as *const ossa_model,
                    path.as_ptr(),
                    &options,
                    &mut out,
                    error.as_mut_ptr(),
                )
            } else {
                ossa_load_file(path.as_ptr(), &options, &mut out, error.as_mut_ptr())
            }
        }
    });
    // SAFETY: zeroed, and written by the call.
    let error = unsafe { error.assume_init() };
    assert_eq!(*fs.open.borrow(), 0, "reads not released: {:?}", fs.reads);
    let inside = ossa::io::is_contained(model_path);
    if !inside {
        assert_eq!(code, OSSA_ERR_INVALID_ARGUMENT as u32, "{model_path}");
        assert!(fs.reads.borrow().is_empty(), "read {:?}", fs.reads);
    }
    let total: usize = fs.entries.iter().map(|e| e.bytes.len()).sum();
    let ceiling = if max_bytes == 0 {
        ossa::LoadOptions::default().max_bytes_for(total)
    } else {
        max_bytes
    };
    // The model within its limit, the files it was read from, and room for work in between.
    let allowed = budget(total) as u64 + 2 * ceiling;
    assert!(
        peak as u64 <= allowed,
        "{total} bytes of files held {peak} bytes at once (limit {max_bytes})"
    );
    if code != OSSA_OK as u32 {
        assert!(
            CLEAN.iter().any(|&c| c as u32 == code),
            "{model_path}: code {code}"
        );
        // SAFETY: ossa writes a NUL-terminated message into the record.
        let message = unsafe { CStr::from_ptr(error.message.as_ptr()) };
        assert!(
            !message.is_empty(),
            "{model_path}: error {code} without a message"
        );
        assert!(out.is_null());
        return;
    }
    assert!(!out.is_null());
    check_finite(out);
    // SAFETY: a live handle from the call, freed once.
    unsafe { ossa_model_free(out) };
}

/// The first and last frames pose to finite matrices, and skin every mesh to finite vertices.
fn check_finite(model: *const ossa_model) {
    let mut info = std::mem::MaybeUninit::<ossa_model_info>::uninit();
    // SAFETY: a live handle and a writable record.
    let info = unsafe {
        assert_eq!(
            ossa_model_get_info(model, info.as_mut_ptr()),
            OSSA_OK as u32
        );
        info.assume_init()
    };
    assert!(info.mins.iter().chain(&info.maxs).all(|v| v.is_finite()));
    if info.flags & OSSA_MODEL_UNBOUND != 0 || info.bone_count == 0 || info.frame_count == 0 {
        return;
    }
    let bones = info.bone_count as usize;
    let mut pose = vec![ossa_mat3x4 { m: [0.0; 12] }; bones];
    for frame in [0, info.frame_count - 1] {
        let blend = ossa_frame_blend { frame, weight: 1.0 };
        // SAFETY: one blend, and `bones` matrices to write.
        let code =
            unsafe { ossa_pose_frames(model, &blend, 1, ptr::null(), pose.as_mut_ptr(), bones) };
        assert_eq!(code, OSSA_OK as u32, "posing frame {frame}");
        assert!(
            pose.iter().all(|m| m.m.iter().all(|v| v.is_finite())),
            "frame {frame} poses to a matrix that is not finite"
        );
        for mesh in 0..info.mesh_count {
            let mut mesh_info = std::mem::MaybeUninit::<ossa_mesh_info>::uninit();
            // SAFETY: a mesh below the count, a writable record.
            let vertices = unsafe {
                assert_eq!(
                    ossa_model_get_mesh(model, mesh, mesh_info.as_mut_ptr()),
                    OSSA_OK as u32
                );
                mesh_info.assume_init().vertex_count
            };
            let mut positions = vec![0.0f32; 3 * vertices as usize];
            let mut normals = vec![0.0f32; 3 * vertices as usize];
            let target = ossa_skin_target {
                positions: positions.as_mut_ptr(),
                position_stride: 12,
                position_bytes: positions.len() * 4,
                normals: normals.as_mut_ptr(),
                normal_stride: 12,
                normal_bytes: normals.len() * 4,
            };
            // SAFETY: the pose has `bones` matrices; the target's buffers are as large as it says.
            let code = unsafe {
                ossa_skin_mesh(model, mesh, pose.as_ptr(), bones, 0, vertices, 0, &target)
            };
            assert_eq!(code, OSSA_OK as u32, "skinning mesh {mesh}");
            assert!(
                positions.iter().chain(&normals).all(|v| v.is_finite()),
                "mesh {mesh} at frame {frame} skins to a vertex that is not finite"
            );
        }
    }
}
