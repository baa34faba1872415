//! Midtown Madness 2 pedestrians: `.skel` skeletons and the `.mod` text meshes bound to them.

use super::Checker;
use crate::error::{Error, Result};
use crate::model::ModelParts;

pub fn looks_like_skel(data: &[u8]) -> bool {
    data.trim_ascii_start().starts_with(b"NumBones")
}

pub fn looks_like_mod(data: &[u8]) -> bool {
    data.trim_ascii_start().starts_with(b"version:")
}

pub(crate) fn read_skel(_data: &[u8], _checker: &mut Checker) -> Result<ModelParts> {
    Err(Error::unsupported("MM2 SKEL files are not supported yet"))
}

pub(crate) fn read_mod(_data: &[u8], _checker: &mut Checker) -> Result<ModelParts> {
    Err(Error::unsupported("MM2 MOD files are not supported yet"))
}
