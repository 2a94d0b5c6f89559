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
            Some(t) => s.serialize_str(&format_timestamp(t)),
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
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
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
