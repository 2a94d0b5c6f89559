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

/// ECMAScript's `Number.prototype.toString` for the numbers JSON carries: integers as
/// integers; other values in the shortest round-trip digits, with an exponent from 1e21 up
/// and below 1e-6.
fn write_number(n: &serde_json::Number, out: &mut String) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
        return;
    }
    if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
        return;
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        out.push('0');
        return;
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        out.push_str(&format!("{f:.0}"));
        return;
    }
    // Shortest round-trip digits and exponent, then ECMAScript's layout.
    let sci = format!("{f:e}"); // like "1.2345e-7" or "-5e21"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let n = exp + 1; // position of the decimal point relative to the digits
    if negative {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.push_str(&"0".repeat((n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat((-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
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
        // Numbers (RFC 8785 appendix B).
        for (n, want) in [
            (json!(1e21), "1e+21"),
            (json!(1e-7), "1e-7"),
            (json!(0.000001), "0.000001"),
            (json!(123456789012.5), "123456789012.5"),
            (json!(-0.5), "-0.5"),
            (json!(333_333_333.333_333_3_f64), "333333333.3333333"),
            (json!(100), "100"),
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
