//! Query attributes (CLIENT_QUERY_ATTRIBUTES, MySQL 8.0.23+): named values
//! a client sends in front of a COM_QUERY's text, or after a
//! COM_STMT_EXECUTE's parameters, which `mysql_query_attribute_string()`
//! reads. Both blocks share the binary parameter encoding; these decoders
//! are pure functions of their bytes, so malformed blocks are errors (the
//! connection answers 1835 / 1210), never panics.

use crate::command::{decode_binary_value, ParamType};
use crate::wire::{Cursor, Malformed, Result};
use lockstep_types::Value;

/// COM_STMT_EXECUTE flag: a parameter count (statement parameters plus
/// attributes) follows the iteration count.
pub const PARAMETER_COUNT_AVAILABLE: u8 = 0x08;

/// One attribute: its name as the client sent it, and its value.
pub type Attribute = (Vec<u8>, Value);

/// The values of an execute's parameter block: the statement's
/// parameters, then the attributes (named values beyond them, and any
/// named statement parameter).
#[derive(Debug, Default, PartialEq)]
pub struct Decoded {
    pub params: Vec<Value>,
    pub attributes: Vec<Attribute>,
}

/// What a prepared statement remembers of its bound parameters between
/// executes (types and names are sent only when they change).
#[derive(Debug, Default, Clone)]
pub struct Bound {
    pub types: Vec<ParamType>,
    pub names: Vec<Vec<u8>>,
}

/// A COM_QUERY payload (after the command byte) of a client with
/// CLIENT_QUERY_ATTRIBUTES: its attributes and the statement text.
pub fn split_query(payload: &[u8]) -> Result<(Vec<Attribute>, &[u8])> {
    let mut c = Cursor::new(payload);
    let count = lenenc(&mut c)?;
    // The parameter set count: always 1 (MySQL reads one set).
    lenenc(&mut c)?;
    if count == 0 {
        return Ok((Vec::new(), c.rest()));
    }
    let mut bound = Bound::default();
    let mut none: [Option<Vec<u8>>; 0] = [];
    let d = decode_block(&mut c, count, 0, &mut bound, true, &mut none)?;
    Ok((d.attributes, c.rest()))
}

/// The parameter block of COM_STMT_EXECUTE (after the iteration count) of
/// a statement with `num_params` parameters. `attributes`: the client has
/// CLIENT_QUERY_ATTRIBUTES, so the block may carry a count and names.
/// A parameter with data in `long_data` takes it (moved out).
pub fn decode_execute(
    data: &[u8],
    flags: u8,
    attributes: bool,
    num_params: usize,
    bound: &mut Bound,
    long_data: &mut [Option<Vec<u8>>],
) -> Result<Decoded> {
    // A block exists when the statement has parameters or the flag says
    // attributes follow; with CLIENT_QUERY_ATTRIBUTES it always starts
    // with the count (MySQL's COM_STMT_EXECUTE layout).
    if num_params == 0 && !(attributes && flags & PARAMETER_COUNT_AVAILABLE != 0) {
        return Ok(Decoded::default());
    }
    let mut c = Cursor::new(data);
    let count = if attributes {
        lenenc(&mut c)?
    } else {
        num_params
    };
    if count < num_params {
        return Err(Malformed("fewer parameters than the statement has"));
    }
    if count == 0 {
        return Ok(Decoded::default());
    }
    decode_block(&mut c, count, num_params, bound, attributes, long_data)
}

/// A length-encoded count, bounded by what a packet can hold (a
/// parameter takes at least one bit of the NULL bitmap).
fn lenenc(c: &mut Cursor<'_>) -> Result<usize> {
    let n = c.lenenc_int()?.ok_or(Malformed("NULL count"))?;
    if n > 8 * (c.remaining() as u64 + 1) {
        return Err(Malformed("count larger than the packet"));
    }
    Ok(n as usize)
}

/// NULL bitmap, new-params-bound flag, types (with names when `named`),
/// then the values of `count` parameters; the first `num_params` are the
/// statement's own.
fn decode_block(
    c: &mut Cursor<'_>,
    count: usize,
    num_params: usize,
    bound: &mut Bound,
    named: bool,
    long_data: &mut [Option<Vec<u8>>],
) -> Result<Decoded> {
    let null_bitmap = c.bytes(count.div_ceil(8))?;
    if c.u8()? == 1 {
        let mut types = Vec::with_capacity(count.min(c.remaining() / 2));
        let mut names = Vec::with_capacity(if named { types.capacity() } else { 0 });
        for _ in 0..count {
            let type_code = c.u8()?;
            let unsigned = c.u8()? & 0x80 != 0;
            types.push(ParamType {
                type_code,
                unsigned,
            });
            if named {
                names.push(c.lenenc_bytes()?.to_vec());
            }
        }
        *bound = Bound { types, names };
    }
    let is_null = |i: usize| null_bitmap[i / 8] & (1 << (i % 8)) != 0;
    // Types are needed only to decode values: a block of NULLs may come
    // without them (Connector/J's setNull on a first execute), as MySQL
    // accepts. They are not kept for later executes.
    let all_null;
    let types = if bound.types.len() == count {
        &bound.types[..]
    } else if (0..count).all(is_null) {
        let null = ParamType {
            type_code: crate::resultset::types::NULL,
            unsigned: false,
        };
        all_null = vec![null; count];
        &all_null[..]
    } else {
        return Err(Malformed("parameter types were never bound"));
    };
    let mut out = Decoded {
        params: Vec::with_capacity(num_params),
        attributes: Vec::new(),
    };
    for (i, ty) in types.iter().enumerate() {
        let value = if let Some(long) = long_data.get_mut(i).and_then(Option::take) {
            Value::Bytes(long)
        } else if is_null(i) {
            Value::Null
        } else {
            decode_binary_value(c, *ty)?
        };
        let name = bound.names.get(i).filter(|n| !n.is_empty());
        if let Some(name) = name {
            out.attributes.push((name.clone(), attribute_value(&value)));
        }
        if i < num_params {
            out.params.push(value);
        }
    }
    Ok(out)
}

/// An attribute as mysql_query_attribute_string() shows it: temporal
/// values with six fractional digits, as MySQL's component prints them.
fn attribute_value(v: &Value) -> Value {
    match v {
        Value::DateTime(dt) => {
            let d = dt.date;
            Value::Bytes(
                format!(
                    "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}",
                    d.year, d.month, d.day, dt.hour, dt.minute, dt.second, dt.micro
                )
                .into_bytes(),
            )
        }
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resultset::types;
    use crate::wire::put_lenenc_bytes;

    /// A block of named string attributes (NULL where `None`).
    fn block(attrs: &[(&str, Option<&str>)]) -> Vec<u8> {
        let mut b = vec![0u8; attrs.len().div_ceil(8)];
        for (i, (_, v)) in attrs.iter().enumerate() {
            if v.is_none() {
                b[i / 8] |= 1 << (i % 8);
            }
        }
        b.push(1);
        for (name, _) in attrs {
            b.extend_from_slice(&[types::VAR_STRING, 0]);
            put_lenenc_bytes(&mut b, name.as_bytes());
        }
        for v in attrs.iter().filter_map(|(_, v)| *v) {
            put_lenenc_bytes(&mut b, v.as_bytes());
        }
        b
    }

    /// NULL parameters need no types (Connector/J sends none for setNull
    /// on a first execute); other values do.
    #[test]
    fn nulls_without_types_decode() {
        let mut bound = Bound::default();
        let mut long: Vec<Option<Vec<u8>>> = vec![None; 3];
        let d = decode_execute(&[3, 0b111, 0], 8, true, 3, &mut bound, &mut long).expect("nulls");
        assert_eq!(d.params, vec![Value::Null; 3]);
        assert!(bound.types.is_empty(), "no types kept");
        let e = decode_execute(&[3, 0b011, 0], 8, true, 3, &mut bound, &mut long);
        assert!(e.is_err(), "a value without a type");
        let d = decode_execute(&[0b11, 0], 0, false, 2, &mut bound, &mut long[..2]).expect("nulls");
        assert_eq!(d.params.len(), 2);
    }

    #[test]
    fn query_with_and_without_attributes() {
        let (attrs, sql) = split_query(b"\x00\x01select 1").expect("decodes");
        assert!(attrs.is_empty());
        assert_eq!(sql, b"select 1");
        let mut p = vec![2, 1];
        p.extend(block(&[("a", Some("x")), ("b", None)]));
        p.extend_from_slice(b"select 2");
        let (attrs, sql) = split_query(&p).expect("decodes");
        assert_eq!(sql, b"select 2");
        assert_eq!(attrs[0], (b"a".to_vec(), Value::str("x")));
        assert_eq!(attrs[1], (b"b".to_vec(), Value::Null));
        for cut in 0..p.len() - 8 {
            assert!(split_query(&p[..cut]).is_err(), "cut at {cut}");
        }
        // A count no packet could hold is refused before allocating.
        assert!(split_query(b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f\x01").is_err());
    }

    #[test]
    fn execute_params_then_attributes() {
        let mut p = vec![3];
        p.extend(block(&[("", Some("p1")), ("k", Some("v")), ("m", None)]));
        let mut bound = Bound::default();
        let d = decode_execute(&p, PARAMETER_COUNT_AVAILABLE, true, 1, &mut bound, &mut [])
            .expect("decodes");
        assert_eq!(d.params, vec![Value::str("p1")]);
        assert_eq!(d.attributes.len(), 2);
        assert_eq!(d.attributes[0], (b"k".to_vec(), Value::str("v")));
        // A DATETIME attribute shows its microseconds, even when zero.
        let mut t = vec![1, 0, 1, types::DATETIME, 0];
        put_lenenc_bytes(&mut t, b"when");
        t.extend_from_slice(&[7, 0xE5, 0x07, 3, 11, 19, 27, 30]);
        let d = decode_execute(&t, PARAMETER_COUNT_AVAILABLE, true, 0, &mut bound, &mut [])
            .expect("decodes");
        assert_eq!(d.attributes[0].1, Value::str("2021-03-11 19:27:30.000000"));
        // Parameters and no attributes: the count is there, the flag not
        // (Connector/Python), names are empty.
        let mut q = vec![1, 0, 1, types::LONG, 0];
        put_lenenc_bytes(&mut q, b"");
        q.extend_from_slice(&7u32.to_le_bytes());
        let d = decode_execute(&q, 0, true, 1, &mut bound, &mut []).expect("decodes");
        assert_eq!(d.params, vec![Value::Int(7)]);
        assert!(d.attributes.is_empty());
        // Without CLIENT_QUERY_ATTRIBUTES: no count, no names.
        let mut r = vec![0, 1, types::LONG, 0];
        r.extend_from_slice(&8u32.to_le_bytes());
        let d = decode_execute(&r, 0, false, 1, &mut bound, &mut []).expect("decodes");
        assert_eq!(d.params, vec![Value::Int(8)]);
        assert!(decode_execute(
            &[1],
            PARAMETER_COUNT_AVAILABLE,
            true,
            2,
            &mut bound,
            &mut []
        )
        .is_err());
        // No parameters, no count: nothing to read.
        let d = decode_execute(&[], 0, true, 0, &mut bound, &mut []).expect("empty");
        assert_eq!(d, Decoded::default());
    }

    #[test]
    fn random_blocks_never_panic() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(41);
        for _ in 0..20_000 {
            let len = rng.gen_range(0..48);
            let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let _ = split_query(&bytes);
            let mut bound = Bound::default();
            let n = rng.gen_range(0..4);
            let _ = decode_execute(&bytes, rng.gen(), true, n, &mut bound, &mut [None]);
        }
    }
}
