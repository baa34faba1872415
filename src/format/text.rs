//! Numbers in the text formats as the retail tools wrote them, so that files read and written
//! again keep their bytes.

/// `x` as C's `%g` writes it: six significant digits, trailing zeros dropped, and an exponent of
/// at least three digits as Microsoft's C library writes it (the retail files' number format).
pub(crate) fn c_g(x: f32) -> String {
    fn trim(s: &str) -> &str {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        }
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        // exp is in -4..6, so the precision is 0..=9.
        let precision = 5i32.abs_diff(exp) as usize;
        trim(&format!("{x:.precision$}")).to_owned()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:03}", trim(mantissa), exp.unsigned_abs())
    }
}

/// Text that reads back as exactly `x`: `%g` where it does (always, for numbers a retail file
/// held), else the shortest exact form.
pub(crate) fn exact_text(x: f32) -> Option<String> {
    let g = c_g(x);
    if g.parse::<f32>().ok().map(f32::to_bits) == Some(x.to_bits()) {
        return Some(g);
    }
    x.is_finite().then(|| {
        if x.abs() >= 1e-4 && x.abs() < 1e7 {
            format!("{x}")
        } else {
            format!("{x:e}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_c_g_with_three_exponent_digits() {
        assert_eq!(c_g(0.263293), "0.263293");
        assert_eq!(c_g(-0.0264804), "-0.0264804");
        assert_eq!(c_g(1.11915e-6), "1.11915e-006");
        assert_eq!(c_g(1.0), "1");
        assert_eq!(c_g(-0.0), "-0");
        assert_eq!(c_g(123456.0), "123456");
        assert_eq!(c_g(1234567.0), "1.23457e+006");
        assert_eq!(c_g(0.0001), "0.0001");
        assert_eq!(c_g(9.999996), "10");
        assert_eq!("1.11915e-006".parse::<f32>().ok(), Some(1.11915e-6));
    }
}
