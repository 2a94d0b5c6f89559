//! The JSON Canonicalization Scheme (RFC 8785), for signing agent cards (spec §8.4): object
//! members sorted by the UTF-16 code units of their names, no whitespace, strings escaped as
//! ECMAScript's `JSON.stringify` does, numbers in ECMAScript's shortest form.

use serde_json::Value;

/// `value` in its canonical form.
pub fn canonicalize(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// The payload an agent card's signatures cover: the card as served, without its
/// `signatures` member, canonicalized.
pub fn card_payload(card: &Value) -> String {
    match card {
        Value::Object(members) => {
            let mut unsigned = members.clone();
            unsigned.remove("signatures");
            canonicalize(&Value::Object(unsigned))
        }
        other => canonicalize(other),
    }
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (name, member)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(name, out);
                out.push(':');
                write(member, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as RFC 8785 writes it: the IEEE 754 double the JSON number denotes (integers
/// beyond 2^53 are rounded to one, as every other JCS implementation reads them), printed by
/// ECMAScript's `Number.prototype.toString` (`ryu-js`): the shortest digits that round-trip,
/// padded with zeros up to 1e21, exponents from there and below 1e-6, `-0` as `0`.
fn write_number(n: &serde_json::Number, out: &mut String) {
    let f = n.as_f64().unwrap_or(0.0);
    out.push_str(ryu_js::Buffer::new().format(f));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_spec_example() {
        let card = json!({"name": "Example Agent", "description": "",
            "capabilities": {"streaming": false, "pushNotifications": false}, "skills": []});
        assert_eq!(
            canonicalize(&card),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
        );
    }

    /// RFC 8785 appendix B: IEEE 754 doubles (by their bits) and their canonical text.
    #[test]
    fn rfc_8785_number_test_vectors() {
        for (bits, want) in [
            (0x0000_0000_0000_0000_u64, "0"),
            (0x8000_0000_0000_0000, "0"),
            (0x0000_0000_0000_0001, "5e-324"),
            (0x8000_0000_0000_0001, "-5e-324"),
            (0x7fef_ffff_ffff_ffff, "1.7976931348623157e+308"),
            (0xffef_ffff_ffff_ffff, "-1.7976931348623157e+308"),
            (0x4340_0000_0000_0000, "9007199254740992"),
            (0xc340_0000_0000_0000, "-9007199254740992"),
            (0x4430_0000_0000_0000, "295147905179352830000"),
            (0x44b5_2d02_c7e1_4af5, "9.999999999999997e+22"),
            (0x44b5_2d02_c7e1_4af6, "1e+23"),
            (0x44b5_2d02_c7e1_4af7, "1.0000000000000001e+23"),
            (0x444b_1ae4_d6e2_ef4e, "999999999999999700000"),
            (0x444b_1ae4_d6e2_ef4f, "999999999999999900000"),
            (0x444b_1ae4_d6e2_ef50, "1e+21"),
            (0x3eb0_c6f7_a0b5_ed8c, "9.999999999999997e-7"),
            (0x3eb0_c6f7_a0b5_ed8d, "0.000001"),
            (0x41b3_de43_5555_5553, "333333333.3333332"),
            (0x41b3_de43_5555_5554, "333333333.33333325"),
            (0x41b3_de43_5555_5555, "333333333.3333333"),
            (0x41b3_de43_5555_5556, "333333333.3333334"),
            (0x41b3_de43_5555_5557, "333333333.33333343"),
            (0xbecb_f647_612f_3696, "-0.0000033333333333333333"),
            (0x4314_3ff3_c1cb_0959, "1424953923781206.2"),
        ] {
            let f = f64::from_bits(bits);
            let n = serde_json::Number::from_f64(f).unwrap();
            assert_eq!(canonicalize(&Value::Number(n)), want, "{bits:#018x}");
        }
    }

    #[test]
    fn rfc_8785_rules() {
        // Member order by UTF-16 code units (RFC 8785 §3.2.3's example).
        let v: Value = serde_json::from_str(
            r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#,
        )
        .unwrap();
        let c = canonicalize(&v);
        let order = [
            "\\r",
            "1",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{fb33}",
        ];
        let mut at = 0;
        for k in order {
            at += c[at..].find(&format!("\"{k}\"")).expect(k);
        }
        for (n, want) in [
            (json!(1e21), "1e+21"),
            (json!(1e-7), "1e-7"),
            (json!(0.000001), "0.000001"),
            (json!(123456789012.5), "123456789012.5"),
            (json!(-0.5), "-0.5"),
            (json!(100), "100"),
            // Not exact integers: the doubles they are, as ECMAScript prints them.
            (json!(1.2345678901234568e20), "123456789012345680000"),
            (json!(9_007_199_254_740_993_u64), "9007199254740992"),
            (json!(-9_007_199_254_740_993_i64), "-9007199254740992"),
            (json!(u64::MAX), "18446744073709552000"),
        ] {
            assert_eq!(canonicalize(&n), want);
        }
        assert_eq!(
            canonicalize(&json!("a\u{1f}\"\\/é")),
            "\"a\\u001f\\\"\\\\/é\""
        );
        assert_eq!(
            card_payload(&json!({"b": 1, "a": [true, null], "signatures": [{"x": 1}]})),
            r#"{"a":[true,null],"b":1}"#
        );
    }
}
