//! ProtoJSON enums: serialized as their proto names, parsed from names or numbers.

/// Declares a proto enum with ProtoJSON serde. Each variant lists its number, proto name
/// and extra accepted spellings (for example the v0.3 lowercase names).
macro_rules! proto_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $num:literal => $proto:literal $(| $alias:literal)*,
            )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[non_exhaustive]
        pub enum $name {
            $(
                $(#[$vmeta])*
                $variant,
            )+
        }

        impl $name {
            /// The proto enum name, as used on the wire.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $proto,)+
                }
            }

            /// The proto enum number.
            pub const fn number(self) -> i32 {
                match self {
                    $(Self::$variant => $num,)+
                }
            }

            /// Looks a value up by number.
            pub fn from_number(n: i64) -> Option<Self> {
                match n {
                    $($num => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// Looks a value up by proto name (or an accepted alternative spelling).
            pub fn from_name(s: &str) -> Option<Self> {
                match s {
                    $($proto $(| $alias)* => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " name or number"))
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_name(v).ok_or_else(|| {
                            E::custom(format!(concat!("unknown ", stringify!($name), " {:?}"), v))
                        })
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        $name::from_number(v).ok_or_else(|| {
                            E::custom(format!(concat!("unknown ", stringify!($name), " number {}"), v))
                        })
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
                    }
                    fn visit_unit<E: serde::de::Error>(self) -> Result<$name, E> {
                        Ok($name::default())
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

pub(crate) use proto_enum;
