//! A bounds-checked reader over file bytes with explicit byte order. Every read either returns a
//! value or a `Truncated` error naming the byte where the data ran out; nothing here can panic.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::marker::PhantomData;

use byteorder::ByteOrder;

use crate::error::{Error, Result};

/// The span `[start, start + len)` of a file, with the arithmetic checked.
pub(crate) fn span(start: u64, len: u64, file_len: usize) -> Result<(usize, usize)> {
    let end = start.checked_add(len);
    match end {
        Some(end) if end <= file_len as u64 => Ok((start as usize, end as usize)),
        _ => Err(Error::truncated(format!(
            "needs {len} bytes but the data ends at byte {file_len:#x}"
        ))
        .at(start)),
    }
}

/// Field `at..at + 4` of a record as a u32. Records come from `as_chunks`, so the range is always
/// inside; a wrong constant reads zeros instead of panicking.
#[inline(always)]
pub(crate) fn u32_at<E: ByteOrder>(record: &[u8], at: usize) -> u32 {
    record.get(at..at.wrapping_add(4)).map_or(0, E::read_u32)
}

#[inline(always)]
pub(crate) fn f32_at<E: ByteOrder>(record: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at::<E>(record, at))
}

/// The byte of record `index` of a `size`-byte table at `base`, for messages. The record lies
/// inside the data, so the sum never reaches u64's end: saturating only guards the arithmetic.
pub(crate) fn record_at(base: u64, index: usize, size: u64) -> u64 {
    base.saturating_add((index as u64).saturating_mul(size))
}

/// The byte of a field `offset` bytes into a record at `at`, for messages (see [`record_at`]).
pub(crate) fn field_at(at: u64, offset: u64) -> u64 {
    at.saturating_add(offset)
}

/// `count * size` in u64, failing as a limit error when it overflows (a count no file can justify).
pub(crate) fn table_bytes(count: u64, size: u64) -> Result<u64> {
    count
        .checked_mul(size)
        .ok_or_else(|| Error::limit(format!("{count} records of {size} bytes overflow 64 bits")))
}

#[derive(Clone)]
pub(crate) struct Cursor<'a, E: ByteOrder> {
    data: &'a [u8],
    pos: usize,
    order: PhantomData<E>,
}

impl<'a, E: ByteOrder> Cursor<'a, E> {
    /// A cursor at `offset`; fails when the offset lies past the end.
    pub fn at(data: &'a [u8], offset: u64) -> Result<Self> {
        let (pos, _) = span(offset, 0, data.len())?;
        Ok(Cursor {
            data,
            pos,
            order: PhantomData,
        })
    }

    /// The absolute byte position of the next read.
    pub fn pos(&self) -> u64 {
        self.pos as u64
    }

    /// The next `n` bytes, advancing past them.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        self.take(n as u64)
    }

    /// The next `count` records of `size` bytes, advancing past them.
    pub fn records(&mut self, count: u64, size: u64) -> Result<&'a [u8]> {
        self.take(table_bytes(count, size)?)
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        let (start, end) = span(self.pos as u64, n, self.data.len())?;
        let taken = self
            .data
            .get(start..end)
            .ok_or_else(|| Error::truncated(format!("needs {n} bytes")).at(self.pos as u64))?;
        self.pos = end;
        Ok(taken)
    }

    pub fn skip(&mut self, n: u64) -> Result<()> {
        let (_, end) = span(self.pos as u64, n, self.data.len())?;
        self.pos = end;
        Ok(())
    }

    /// Requires `n` more bytes without reading them: checks a whole record or table once.
    pub fn require(&self, n: u64) -> Result<()> {
        span(self.pos as u64, n, self.data.len()).map(|_| ())
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let end = self.pos.checked_add(N);
        match end.and_then(|end| Some((end, self.data.get(self.pos..end)?))) {
            Some((end, slice)) => {
                let mut out = [0u8; N];
                out.copy_from_slice(slice);
                self.pos = end;
                Ok(out)
            }
            None => Err(Error::truncated(format!(
                "needs {N} bytes but the data ends at byte {:#x}",
                self.data.len()
            ))
            .at(self.pos as u64)),
        }
    }

    #[inline]
    pub fn u32(&mut self) -> Result<u32> {
        self.array::<4>().map(|b| E::read_u32(&b))
    }

    #[inline]
    pub fn i32(&mut self) -> Result<i32> {
        self.array::<4>().map(|b| E::read_i32(&b))
    }

    /// A float as stored, NaN and infinity included, for callers that report them themselves.
    #[inline]
    pub fn f32_raw(&mut self) -> Result<f32> {
        self.array::<4>().map(|b| E::read_f32(&b))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use byteorder::{BigEndian, LittleEndian};

    #[test]
    fn reads_in_the_declared_order() {
        let data = [0, 0, 1, 2, 0x3f, 0x80, 0, 0];
        let mut be = Cursor::<BigEndian>::at(&data, 0).unwrap();
        assert_eq!(be.u32().unwrap(), 0x0102);
        assert_eq!(be.f32_raw().unwrap(), 1.0);
        let mut le = Cursor::<LittleEndian>::at(&data, 0).unwrap();
        assert_eq!(le.u32().unwrap(), 0x0201_0000);
    }

    #[test]
    fn short_reads_name_the_offset() {
        let data = [1u8, 2, 3];
        let mut c = Cursor::<BigEndian>::at(&data, 1).unwrap();
        let e = c.u32().unwrap_err();
        assert_eq!(e.code(), ErrorCode::Truncated);
        assert_eq!(e.offset(), Some(1));
        assert!(Cursor::<BigEndian>::at(&data, 4).is_err());
        assert!(Cursor::<BigEndian>::at(&data, u64::MAX).is_err());
    }
}
