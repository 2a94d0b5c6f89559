//! Serde helpers for ProtoJSON conventions: lenient input, canonical output.

use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serializer, de};

/// An optional string where `null` and `""` both mean "unset" (ProtoJSON default value).
pub(crate) mod opt_string {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        let v: Option<String> = Option::deserialize(d)?;
        Ok(v.filter(|s| !s.is_empty()))
    }
}

/// A string where `null` means "unset" (empty).
pub(crate) mod string {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        let v: Option<String> = Option::deserialize(d)?;
        Ok(v.unwrap_or_default())
    }
}

/// A repeated field where `null` means "empty".
pub(crate) mod vec {
    use super::*;

    pub(crate) fn deserialize<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        let v: Option<Vec<T>> = Option::deserialize(d)?;
        Ok(v.unwrap_or_default())
    }
}

/// A bool where `null` means `false`.
pub(crate) mod boolean {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        let v: Option<bool> = Option::deserialize(d)?;
        Ok(v.unwrap_or_default())
    }
}

/// `optional int32`: ProtoJSON accepts numbers and numeric strings.
pub(crate) mod opt_i32 {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Option<i32>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 32-bit integer or a numeric string")
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                i32::try_from(v)
                    .map(Some)
                    .map_err(|_| E::custom("integer out of range for int32"))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i32::try_from(v)
                    .map(Some)
                    .map_err(|_| E::custom("integer out of range for int32"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
                    Ok(Some(v as i32))
                } else {
                    Err(E::custom("expected an integer"))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                v.trim()
                    .parse::<i32>()
                    .map(Some)
                    .map_err(|_| E::custom("expected an integer"))
            }
        }
        d.deserialize_option(V)
    }
}

/// Timestamps: RFC 3339 UTC with millisecond precision out, any RFC 3339 in.
pub(crate) mod timestamp {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        v: &Option<DateTime<Utc>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(t) => with_timestamp_text(t, |text| s.serialize_str(text)),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<DateTime<Utc>>, D::Error> {
        let v: Option<String> = Option::deserialize(d)?;
        match v.as_deref() {
            None | Some("") => Ok(None),
            Some(s) => parse_timestamp(s)
                .map(Some)
                .ok_or_else(|| de::Error::custom(format!("invalid RFC 3339 timestamp: {s:?}"))),
        }
    }
}

/// Formats a timestamp the way the spec asks: `YYYY-MM-DDTHH:mm:ss.sssZ`.
pub fn format_timestamp(t: &DateTime<Utc>) -> String {
    with_timestamp_text(t, str::to_owned)
}

/// Calls `f` with the text [`format_timestamp`] makes of `t`, written on the stack.
///
/// Every blocking send writes a status timestamp twice (the answer, the stored form), and
/// chrono's `to_rfc3339_opts` costs about 900 instructions each (its generic formatting
/// items and a `String`); written here, about 370 (counted with callgrind). Years 0 to
/// 9999 and no leap second, that is every timestamp of this century; others go through
/// chrono, whose output this matches (tested against it).
pub(crate) fn with_timestamp_text<R>(t: &DateTime<Utc>, f: impl FnOnce(&str) -> R) -> R {
    use chrono::{Datelike, Timelike};
    let (year, nanos) = (t.year(), t.nanosecond());
    if !(0..=9999).contains(&year) || nanos >= 1_000_000_000 {
        return f(&t.to_rfc3339_opts(SecondsFormat::Millis, true));
    }
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut n: u32| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year.unsigned_abs());
    put(5, 2, t.month());
    put(8, 2, t.day());
    put(11, 2, t.hour());
    put(14, 2, t.minute());
    put(17, 2, t.second());
    put(20, 3, nanos / 1_000_000);
    // Only ASCII digits and separators were written.
    f(std::str::from_utf8(&out).unwrap_or_default())
}

/// Parses an RFC 3339 timestamp (any offset) into UTC.
pub fn parse_timestamp(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// `bytes` fields: base64 (standard or URL-safe, padded or not) in, standard padded out.
pub(crate) mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

    use super::*;

    pub(crate) fn encode(v: &[u8]) -> String {
        STANDARD.encode(v)
    }

    pub(crate) fn decode(s: &str) -> Option<Vec<u8>> {
        let s = s.trim();
        STANDARD
            .decode(s)
            .or_else(|_| STANDARD_NO_PAD.decode(s))
            .or_else(|_| URL_SAFE.decode(s))
            .or_else(|_| URL_SAFE_NO_PAD.decode(s))
            .ok()
    }

    #[allow(dead_code)]
    pub(crate) fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(v))
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, NaiveDate, SecondsFormat, TimeZone, Utc};

    use super::format_timestamp;

    fn chrono_text(t: &DateTime<Utc>) -> String {
        t.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    #[test]
    fn timestamps_are_written_as_chrono_writes_them() {
        let at = |y, mo, d, h, mi, s, nanos| {
            let naive = NaiveDate::from_ymd_opt(y, mo, d)
                .and_then(|d| d.and_hms_nano_opt(h, mi, s, nanos))
                .expect("a valid date");
            Utc.from_utc_datetime(&naive)
        };
        let mut cases = vec![
            at(1970, 1, 1, 0, 0, 0, 0),
            at(0, 1, 1, 0, 0, 0, 0),
            at(9999, 12, 31, 23, 59, 59, 999_999_999),
            at(2026, 12, 6, 9, 5, 7, 1_000_000),
            at(2024, 2, 29, 12, 0, 0, 999_000),
            // Outside the written-by-hand years, and a leap second: chrono's text.
            at(-1, 12, 31, 23, 59, 59, 0),
            at(10000, 1, 1, 0, 0, 0, 0),
            at(2016, 12, 31, 23, 59, 59, 1_500_000_000),
        ];
        // Pseudo-random instants over years 0 to 9999, with nanoseconds that are not whole
        // milliseconds (the text truncates them).
        let (first, last) = (cases[1].timestamp(), cases[2].timestamp());
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let secs = first + (x % (last - first) as u64) as i64;
            let nanos = (x >> 40) as u32 % 1_000_000_000;
            cases.push(DateTime::from_timestamp(secs, nanos).expect("in range"));
        }
        for t in &cases {
            assert_eq!(format_timestamp(t), chrono_text(t), "{t:?}");
        }
    }
}
