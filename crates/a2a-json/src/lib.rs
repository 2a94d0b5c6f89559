//! Compact JSON, byte for byte as `serde_json::to_string` writes it, faster: a task like a
//! blocking send's answer takes 0.61–0.65× the time, 4 KiB of text with line breaks 0.45×
//! (`cargo bench -p a2a-json --bench task`).
//!
//! `serde_json` looks at every byte of every string it writes. A blocking send writes about
//! eighty strings (ids, keys, timestamps, text), and their escaping was a fifth of the send's
//! instructions (`scripts/count-instructions.sh`, `docs/benchmarks.md`). This writer looks at
//! a string eight bytes at a time and copies one that needs no escape whole, and it writes
//! into a `String`, so no UTF-8 check is needed to get one.
//!
//! The output is the same as `serde_json`'s for every value, `serde_json::value::RawValue`
//! included (the tests compare them); errors are `serde_json::Error`s with the same meaning,
//! though not always the same text.
//!
//! ```
//! #[derive(serde::Serialize)]
//! struct Reply<'a> {
//!     id: u32,
//!     text: &'a str,
//! }
//! let reply = Reply { id: 7, text: "line\none" };
//! let json = a2a_json::to_string(&reply).unwrap();
//! assert_eq!(json, r#"{"id":7,"text":"line\none"}"#);
//! assert_eq!(json, serde_json::to_string(&reply).unwrap());
//! ```

/// `Serializer` methods that refuse whatever they are given, with the error `$error()`.
macro_rules! refuse {
    ($error:ident; $($method:ident($($arg:ty),*) -> $ok:ty),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok> {
            Err($error())
        })*
    };
}

/// The associated types of a `Serializer` that writes no arrays or objects, and its methods
/// that would begin one (a variant with content included), which refuse with `$error()`.
macro_rules! no_compounds {
    ($error:ident) => {
        type Ok = ();
        type Error = Error;
        type SerializeSeq = Impossible<(), Error>;
        type SerializeTuple = Impossible<(), Error>;
        type SerializeTupleStruct = Impossible<(), Error>;
        type SerializeTupleVariant = Impossible<(), Error>;
        type SerializeMap = Impossible<(), Error>;
        type SerializeStruct = Impossible<(), Error>;
        type SerializeStructVariant = Impossible<(), Error>;

        refuse!(
            $error;
            serialize_seq(Option<usize>) -> Self::SerializeSeq,
            serialize_tuple(usize) -> Self::SerializeTuple,
            serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct,
            serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant,
            serialize_map(Option<usize>) -> Self::SerializeMap,
            serialize_struct(&'static str, usize) -> Self::SerializeStruct,
            serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant,
        );

        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<()> {
            Err($error())
        }
    };
}

mod key;
mod raw;
mod string;

use serde::Serialize;
use serde::ser;
use serde_json::{Error, Result};

/// `value` as compact JSON.
///
/// Written into a buffer this thread keeps, then copied into a string of its exact size: one
/// allocation, where growing the string as it is written took one per doubling (a stored
/// event of 400 bytes took three, each a copy of what was written so far).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let scratch = SCRATCH.try_with(|scratch| {
        // Taken, not borrowed: a `Serialize` impl may call `to_string` itself, and the inner
        // call then finds the buffer gone and writes its own.
        let mut out = scratch.take();
        out.clear();
        let written = write(&mut out, value);
        if out.capacity() > MAX_SCRATCH {
            // Too large to keep: it is the answer itself, not copied once more.
            return written.map(|()| out);
        }
        let json = written.map(|()| String::from(out.as_str()));
        scratch.set(out);
        json
    });
    scratch.unwrap_or_else(|_| {
        // The thread is being torn down.
        let mut out = String::new();
        write(&mut out, value).map(|()| out)
    })
}

/// The largest buffer [`to_string`] keeps for its thread: a value that outgrows it is
/// answered in the buffer it grew, and the thread starts a new one.
const MAX_SCRATCH: usize = 64 * 1024;

thread_local! {
    static SCRATCH: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// `value` as compact JSON, in bytes.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    to_string(value).map(String::into_bytes)
}

/// Appends `value` to `out` as compact JSON. On error, `out` may hold part of it.
pub fn write<T: Serialize + ?Sized>(out: &mut String, value: &T) -> Result<()> {
    value.serialize(&mut Writer { out })
}

/// The `serde` serializer: appends to a string.
pub(crate) struct Writer<'o> {
    pub(crate) out: &'o mut String,
}

/// `serialize_*` methods for integers, written in decimal.
macro_rules! integers {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Result<()> {
            self.out.push_str(itoa::Buffer::new().format(v));
            Ok(())
        })*
    };
}

impl Writer<'_> {
    /// A float as `serde_json` writes it: `null` unless `finite`.
    fn push_float<F: zmij::Float>(&mut self, v: F, finite: bool) {
        if finite {
            self.out.push_str(zmij::Buffer::new().format_finite(v));
        } else {
            self.out.push_str("null");
        }
    }

    /// `{"variant":` — the start of an externally tagged variant with content.
    fn begin_variant(&mut self, variant: &str) {
        self.out.push('{');
        string::write_str(self.out, variant);
        self.out.push(':');
    }
}

/// The state of an array or object being written.
enum Compound<'a, 'o> {
    /// `first` until the first element or member is written; `empty` when a known length of
    /// zero closed it at once; `variant` when it is the content of a variant, so one more `}`
    /// follows.
    Open {
        writer: &'a mut Writer<'o>,
        first: bool,
        empty: bool,
        object: bool,
        variant: bool,
    },
    /// A `serde_json::value::RawValue`: its one field is written as is.
    Raw { writer: &'a mut Writer<'o> },
}

impl<'a, 'o> Compound<'a, 'o> {
    /// Opens an array, or an `object`; a known length of zero closes it at once, as
    /// `serde_json` does.
    fn open(writer: &'a mut Writer<'o>, object: bool, len: Option<usize>, variant: bool) -> Self {
        let empty = len == Some(0);
        // Constant characters: `push` of a known ASCII one is one byte stored.
        match (object, empty) {
            (false, false) => writer.out.push('['),
            (false, true) => writer.out.push_str("[]"),
            (true, false) => writer.out.push('{'),
            (true, true) => writer.out.push_str("{}"),
        }
        Compound::Open {
            writer,
            first: true,
            empty,
            object,
            variant,
        }
    }

    /// The writer, after the separator the next element or member needs.
    fn next(&mut self) -> &mut Writer<'o> {
        match self {
            Compound::Open { writer, first, .. } => {
                if !std::mem::take(first) {
                    writer.out.push(',');
                }
                writer
            }
            Compound::Raw { writer } => writer,
        }
    }

    fn close(self) {
        if let Compound::Open {
            writer,
            empty,
            object,
            variant,
            ..
        } = self
        {
            match (empty, object) {
                (true, _) => {}
                (false, false) => writer.out.push(']'),
                (false, true) => writer.out.push('}'),
            }
            if variant {
                writer.out.push('}');
            }
        }
    }

    fn member<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<()> {
        if let Compound::Raw { writer } = self {
            return if key == raw::TOKEN {
                value.serialize(raw::RawEmitter { out: writer.out })
            } else {
                Err(ser::Error::custom("expected RawValue"))
            };
        }
        let writer = self.next();
        string::write_str(writer.out, key);
        writer.out.push(':');
        value.serialize(writer)
    }
}

impl<'a, 'o> ser::Serializer for &'a mut Writer<'o> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'o>;
    type SerializeTuple = Compound<'a, 'o>;
    type SerializeTupleStruct = Compound<'a, 'o>;
    type SerializeTupleVariant = Compound<'a, 'o>;
    type SerializeMap = Compound<'a, 'o>;
    type SerializeStruct = Compound<'a, 'o>;
    type SerializeStructVariant = Compound<'a, 'o>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }

    integers!(
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128,
    );

    fn serialize_f32(self, v: f32) -> Result<()> {
        self.push_float(v, v.is_finite());
        Ok(())
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        self.push_float(v, v.is_finite());
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<()> {
        string::write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<()> {
        string::write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        // An array of numbers, as `serde_json` writes bytes.
        let mut seq = Compound::open(self, false, Some(v.len()), false);
        for byte in v {
            ser::SerializeSeq::serialize_element(&mut seq, byte)?;
        }
        seq.close();
        Ok(())
    }

    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.out.push_str("null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.begin_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push('}');
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq> {
        Ok(Compound::open(self, false, len, false))
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        self.begin_variant(variant);
        Ok(Compound::open(self, false, Some(len), true))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap> {
        Ok(Compound::open(self, true, len, false))
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct> {
        if name == raw::TOKEN {
            return Ok(Compound::Raw { writer: self });
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        self.begin_variant(variant);
        Ok(Compound::open(self, true, Some(len), true))
    }

    fn collect_str<T: std::fmt::Display + ?Sized>(self, value: &T) -> Result<()> {
        use std::fmt::Write as _;
        /// Escapes each piece as `Display` writes it.
        struct Escaping<'s>(&'s mut String);
        impl std::fmt::Write for Escaping<'_> {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                string::write_str_contents(self.0, s);
                Ok(())
            }
        }
        self.out.push('"');
        write!(Escaping(self.out), "{value}").map_err(ser::Error::custom)?;
        self.out.push('"');
        Ok(())
    }
}

/// The traits whose elements are written one after another (arrays, and tuples of every kind).
macro_rules! elements {
    ($($trait:ident::$method:ident),* $(,)?) => {
        $(impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                value.serialize(self.next())
            }

            fn end(self) -> Result<()> {
                self.close();
                Ok(())
            }
        })*
    };
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        key.serialize(key::KeyWriter {
            out: self.next().out,
        })
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let writer = self.next_value();
        value.serialize(writer)
    }

    fn end(self) -> Result<()> {
        self.close();
        Ok(())
    }
}

impl<'o> Compound<'_, 'o> {
    /// The writer, after the `:` between a key and its value.
    fn next_value(&mut self) -> &mut Writer<'o> {
        let writer = match self {
            Compound::Open { writer, .. } | Compound::Raw { writer } => writer,
        };
        writer.out.push(':');
        writer
    }
}

/// The traits whose members are named by the type (structs, and struct variants).
macro_rules! members {
    ($($trait:ident),* $(,)?) => {
        $(impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<()> {
                self.member(key, value)
            }

            fn end(self) -> Result<()> {
                self.close();
                Ok(())
            }
        })*
    };
}

members!(SerializeStruct, SerializeStructVariant);
