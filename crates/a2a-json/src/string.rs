//! JSON strings, escaped as `serde_json` escapes them: `"` and `\` with a backslash; `\b`, `\t`,
//! `\n`, `\f`, `\r` by name; the other bytes below 0x20 as `\u00xx` (lowercase hex); nothing
//! else. A string is first looked at eight bytes at a time; one that needs no escape (nearly
//! all of them) is copied whole.

/// Appends `s` to `out` as a JSON string, quotes included.
pub(crate) fn write_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    write_str_contents(out, s);
    out.push('"');
}

/// Appends `s` to `out` escaped, without quotes.
pub(crate) fn write_str_contents(out: &mut String, s: &str) {
    // Almost every string the request path writes (ids, keys, names, timestamps) needs no
    // escape: one look at its words, then one copy.
    if has_escape(s.as_bytes()) {
        write_escaped(out, s);
    } else {
        out.push_str(s);
    }
}

/// Whether any byte of `bytes` needs an escape, looking at eight bytes at a time: the last
/// word overlaps the one before, and a string shorter than eight is read as two overlapping
/// halves or three bytes, so no byte is looked at alone.
fn has_escape(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            if needs_escape(word_at(bytes, i)) {
                return true;
            }
            i += 8;
        }
        needs_escape(word_at(bytes, n - 8))
    } else if n >= 4 {
        let low = u64::from(half_at(bytes, 0));
        let high = u64::from(half_at(bytes, n - 4));
        needs_escape(low | high << 32)
    } else if n > 0 {
        // Bytes 0, n/2 and n-1 cover a string of one to three; the rest is filled with 'a'.
        let word = u64::from(bytes[0])
            | u64::from(bytes[n / 2]) << 8
            | u64::from(bytes[n - 1]) << 16
            | 0x6161_6161_6100_0000;
        needs_escape(word)
    } else {
        false
    }
}

fn word_at(bytes: &[u8], i: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[i..i + 8]);
    u64::from_le_bytes(word)
}

fn half_at(bytes: &[u8], i: usize) -> u32 {
    let mut half = [0; 4];
    half.copy_from_slice(&bytes[i..i + 4]);
    u32::from_le_bytes(half)
}

/// Appends `s` escaped, for a string known to need an escape: whole words that need none are
/// skipped, the bytes of the others looked at one by one, and the runs between escapes
/// copied. (Long text with a line break every so often stays nearly as fast as text
/// without.)
// Out of line and cold: inlined, it made every string's path longer (69 068 instructions a
// send; 68 001 out of line), though nearly no string takes it.
#[cold]
#[inline(never)]
fn write_escaped(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut run_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        while i + 8 <= bytes.len() && !needs_escape(word_at(bytes, i)) {
            i += 8;
        }
        let word_end = bytes.len().min(i + 8);
        while i < word_end {
            let byte = bytes[i];
            if is_escaped(byte) {
                // An escaped byte is ASCII, so `run_start..i` lies on character boundaries.
                out.push_str(&s[run_start..i]);
                write_escape(out, byte);
                run_start = i + 1;
            }
            i += 1;
        }
    }
    out.push_str(&s[run_start..]);
}

fn is_escaped(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Whether any of the eight bytes of `word` is below 0x20, `"` or `\`. Exact: the classic
/// "has a zero byte" test answers for the whole word without false positives.
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let has_quote = quote.wrapping_sub(ONES) & !quote;
    let has_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below_space | has_quote | has_backslash) & HIGHS != 0
}

fn write_escape(out: &mut String, byte: u8) {
    let named = match byte {
        b'"' => "\\\"",
        b'\\' => "\\\\",
        0x08 => "\\b",
        0x0C => "\\f",
        b'\n' => "\\n",
        b'\r' => "\\r",
        b'\t' => "\\t",
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xF)]));
            return;
        }
    };
    out.push_str(named);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_string_test_agrees_with_the_byte_test() {
        // One byte of every value at every position of strings of every length up to 20.
        for len in 1..20 {
            for pos in 0..len {
                for b in 0..=127u8 {
                    let mut bytes = vec![b'a'; len];
                    bytes[pos] = b;
                    assert_eq!(
                        has_escape(&bytes),
                        is_escaped(b),
                        "byte {b:#x} at {pos} of {len}"
                    );
                }
            }
        }
        assert!(!has_escape(b""));
    }

    #[test]
    fn the_word_test_agrees_with_the_byte_test() {
        // Every byte value at every position of a word, among bytes that need no escape.
        for pos in 0..8 {
            for b in 0..=255u8 {
                let mut bytes = *b"abcdefgh";
                bytes[pos] = b;
                assert_eq!(
                    needs_escape(u64::from_le_bytes(bytes)),
                    is_escaped(b),
                    "byte {b:#x} at {pos}"
                );
            }
        }
        // Bytes above 0x7F around an escaped one (borrows must not hide or invent one).
        for b in 0..=255u8 {
            let bytes = [0xFF, 0x80, b, 0x20, 0x21, 0x23, 0x5D, 0xC3];
            assert_eq!(needs_escape(u64::from_le_bytes(bytes)), is_escaped(b));
        }
    }
}
