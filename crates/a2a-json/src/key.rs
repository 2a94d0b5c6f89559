//! Object keys, as `serde_json` writes them: strings as strings; integers, booleans and
//! finite floats quoted; anything else an error.

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::{Error, Result};

use crate::string;

/// Writes one key.
pub(crate) struct KeyWriter<'o> {
    pub(crate) out: &'o mut String,
}

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

fn float_key_must_be_finite() -> Error {
    ser::Error::custom("float key must be finite (got NaN or +/-inf)")
}

impl KeyWriter<'_> {
    fn quoted(self, text: &str) -> Result<()> {
        self.out.push('"');
        self.out.push_str(text);
        self.out.push('"');
        Ok(())
    }
}

macro_rules! quoted_integer {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Result<()> {
            self.quoted(itoa::Buffer::new().format(v))
        })*
    };
}

impl ser::Serializer for KeyWriter<'_> {
    no_compounds!(key_must_be_a_string);

    fn serialize_str(self, v: &str) -> Result<()> {
        string::write_str(self.out, v);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<()> {
        string::write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.quoted(if v { "true" } else { "false" })
    }

    quoted_integer!(
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128,
    );

    fn serialize_f32(self, v: f32) -> Result<()> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(zmij::Buffer::new().format_finite(v))
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(zmij::Buffer::new().format_finite(v))
    }

    fn collect_str<T: std::fmt::Display + ?Sized>(self, value: &T) -> Result<()> {
        // A string, as the writer collects one.
        ser::Serializer::collect_str(&mut crate::Writer { out: self.out }, value)
    }

    refuse!(
        key_must_be_a_string;
        serialize_bytes(&[u8]) -> (),
        serialize_none() -> (),
        serialize_unit() -> (),
        serialize_unit_struct(&'static str) -> (),
    );
}
