//! `serde_json::value::RawValue`: it serializes as a struct of this name with one field of
//! this name, whose string value is the JSON to write as is.

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::{Error, Result};

/// `serde_json`'s private name for a raw value's struct and field (stable since 1.0.29).
pub(crate) const TOKEN: &str = "$serde_json::private::RawValue";

/// Accepts the raw value's text, and nothing else.
pub(crate) struct RawEmitter<'o> {
    pub(crate) out: &'o mut String,
}

fn expected_raw_value() -> Error {
    ser::Error::custom("expected RawValue")
}

impl ser::Serializer for RawEmitter<'_> {
    no_compounds!(expected_raw_value);

    fn serialize_str(self, v: &str) -> Result<()> {
        self.out.push_str(v);
        Ok(())
    }

    refuse!(
        expected_raw_value;
        serialize_bool(bool) -> (),
        serialize_i8(i8) -> (), serialize_i16(i16) -> (), serialize_i32(i32) -> (),
        serialize_i64(i64) -> (), serialize_i128(i128) -> (),
        serialize_u8(u8) -> (), serialize_u16(u16) -> (), serialize_u32(u32) -> (),
        serialize_u64(u64) -> (), serialize_u128(u128) -> (),
        serialize_f32(f32) -> (), serialize_f64(f64) -> (),
        serialize_char(char) -> (),
        serialize_bytes(&[u8]) -> (),
        serialize_none() -> (),
        serialize_unit() -> (),
        serialize_unit_struct(&'static str) -> (),
        serialize_unit_variant(&'static str, u32, &'static str) -> (),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<()> {
        Err(expected_raw_value())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T) -> Result<()> {
        Err(expected_raw_value())
    }
}
