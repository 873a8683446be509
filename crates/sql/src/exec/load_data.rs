//! LOAD DATA's file format: splits bytes, fed in pieces as they arrive,
//! into rows of fields by FIELDS TERMINATED / [OPTIONALLY] ENCLOSED /
//! ESCAPED BY and LINES STARTING / TERMINATED BY. Only the row being
//! read is kept between pieces, so a file of any size passes through a
//! buffer of about one packet plus one line.

use crate::parser::LoadFormat;
use lockstep_types::error::Code;
use lockstep_types::Error;

/// One field: its bytes, or None for NULL (`\N`, or an unquoted NULL
/// when ENCLOSED BY is set).
pub type Field = Option<Vec<u8>>;

pub struct Splitter {
    format: LoadFormat,
    /// Bytes not yet made into rows (the start of the next row).
    pending: Vec<u8>,
    /// The longest row accepted (the statement's memory cap).
    max_row: usize,
}

/// Why a row could not be read yet.
enum Partial {
    /// The buffer ends inside the row: more bytes are needed.
    More,
}

impl Splitter {
    /// 1235 for the fixed-width format (empty FIELDS and LINES
    /// TERMINATED BY), which lockstep does not read.
    pub fn new(format: LoadFormat, max_row: usize) -> Result<Splitter, Error> {
        if format.field_term.is_empty() || format.line_term.is_empty() {
            return Err(Error::unsupported(
                "LOAD DATA with an empty FIELDS or LINES TERMINATED BY",
            ));
        }
        Ok(Splitter {
            format,
            pending: Vec::new(),
            max_row,
        })
    }

    /// Appends `data`; every complete row goes to `row`. `last`: no more
    /// bytes follow, so what remains is the last row.
    pub fn feed(
        &mut self,
        data: &[u8],
        last: bool,
        row: &mut dyn FnMut(Vec<Field>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.pending.extend_from_slice(data);
        let mut at = 0;
        while at < self.pending.len() {
            match self.read_row(at, last) {
                Ok(Some((fields, next))) => {
                    at = next;
                    row(fields)?;
                }
                Ok(None) => at = self.pending.len(),
                Err(Partial::More) => break,
            }
        }
        self.pending.drain(..at);
        if self.pending.len() > self.max_row {
            return Err(Error::new(
                Code::OutOfResources,
                "Out of memory: a LOAD DATA row is larger than query_memory_limit",
            ));
        }
        Ok(())
    }

    /// The row starting at `at` (after LINES STARTING BY) and where the
    /// next starts; None when no line start remains.
    fn read_row(&self, at: usize, last: bool) -> Result<Option<(Vec<Field>, usize)>, Partial> {
        let buf = &self.pending;
        let f = &self.format;
        let mut pos = at;
        if !f.line_start.is_empty() {
            match find(&buf[at..], &f.line_start) {
                Some(i) => pos = at + i + f.line_start.len(),
                None if last => return Ok(None),
                None => return Err(Partial::More),
            }
        }
        let mut fields = Vec::new();
        loop {
            let (field, end) = self.read_field(pos, last)?;
            fields.push(field);
            if buf[end..].starts_with(&f.field_term) {
                pos = end + f.field_term.len();
                // A field terminator at the very end of the file: one
                // more, empty field.
                if pos == buf.len() && last {
                    fields.push(Some(Vec::new()));
                    return Ok(Some((fields, pos)));
                }
            } else if buf[end..].starts_with(&f.line_term) {
                return Ok(Some((fields, end + f.line_term.len())));
            } else {
                debug_assert!(end == buf.len() && last, "a field ends at a terminator");
                return Ok(Some((fields, end)));
            }
        }
    }

    /// One field from `pos`: its value and where it ends (at a terminator
    /// or the end of the buffer).
    fn read_field(&self, pos: usize, last: bool) -> Result<(Field, usize), Partial> {
        let buf = &self.pending;
        let f = &self.format;
        if let Some(q) = f.enclosed {
            if buf.get(pos) == Some(&q) {
                if let Some(r) = self.read_quoted(pos + 1, q, last)? {
                    return Ok(r);
                }
            }
        }
        let mut out = Vec::new();
        let mut i = pos;
        loop {
            if i == buf.len() {
                if !last {
                    return Err(Partial::More);
                }
                break;
            }
            if buf[i..].starts_with(&f.field_term) || buf[i..].starts_with(&f.line_term) {
                break;
            }
            if Some(buf[i]) == f.escaped {
                let Some(&next) = buf.get(i + 1) else {
                    if !last {
                        return Err(Partial::More);
                    }
                    out.push(buf[i]);
                    break;
                };
                if next == b'N' && i == pos && self.ends_field(i + 2, last)? {
                    return Ok((None, i + 2));
                }
                out.push(unescape(next));
                i += 2;
                continue;
            }
            out.push(buf[i]);
            i += 1;
        }
        if f.enclosed.is_some() && out == b"NULL" {
            return Ok((None, i));
        }
        Ok((Some(out), i))
    }

    /// A quoted field's value from just after its opening quote; None if
    /// the quote never closes before a terminator (then it is data).
    fn read_quoted(
        &self,
        start: usize,
        q: u8,
        last: bool,
    ) -> Result<Option<(Field, usize)>, Partial> {
        let buf = &self.pending;
        let mut out = Vec::new();
        let mut i = start;
        loop {
            let Some(&b) = buf.get(i) else {
                return if last { Ok(None) } else { Err(Partial::More) };
            };
            if Some(b) == self.format.escaped {
                let Some(&next) = buf.get(i + 1) else {
                    return if last { Ok(None) } else { Err(Partial::More) };
                };
                out.push(unescape(next));
                i += 2;
            } else if b == q {
                if buf.get(i + 1) == Some(&q) {
                    out.push(q);
                    i += 2;
                } else if self.ends_field(i + 1, last)? {
                    return Ok(Some((Some(out), i + 1)));
                } else {
                    out.push(q);
                    i += 1;
                }
            } else {
                out.push(b);
                i += 1;
            }
        }
    }

    /// Whether a field may end at `i`: a terminator or the end of the file.
    fn ends_field(&self, i: usize, last: bool) -> Result<bool, Partial> {
        let rest = &self.pending[i.min(self.pending.len())..];
        let f = &self.format;
        if rest.starts_with(&f.field_term) || rest.starts_with(&f.line_term) {
            return Ok(true);
        }
        if rest.is_empty() {
            return if last { Ok(true) } else { Err(Partial::More) };
        }
        // A terminator cut off at the end of what has arrived.
        let cut = |t: &[u8]| t.starts_with(rest);
        if !last && (cut(&f.field_term) || cut(&f.line_term)) {
            return Err(Partial::More);
        }
        Ok(false)
    }
}

/// The byte an escape sequence stands for (MySQL's: \0 \b \n \r \t \Z;
/// any other byte stands for itself).
fn unescape(b: u8) -> u8 {
    match b {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 26,
        other => other,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(format: LoadFormat, data: &[u8], piece: usize) -> Vec<Vec<Field>> {
        let mut s = Splitter::new(format, 1 << 20).expect("format");
        let mut rows = Vec::new();
        let mut keep = |r| {
            rows.push(r);
            Ok(())
        };
        for chunk in data.chunks(piece.max(1)) {
            s.feed(chunk, false, &mut keep).expect("feeds");
        }
        s.feed(&[], true, &mut keep).expect("ends");
        rows
    }

    fn f(s: &str) -> Field {
        Some(s.as_bytes().to_vec())
    }

    #[test]
    fn default_format_in_any_piece_size() {
        let data = b"1\ta\\tb\n2\t\\N\n3\tlast";
        for piece in [1, 2, 3, 100] {
            let rows = split(LoadFormat::default(), data, piece);
            assert_eq!(
                rows,
                vec![
                    vec![f("1"), f("a\tb")],
                    vec![f("2"), None],
                    vec![f("3"), f("last")]
                ],
                "piece {piece}"
            );
        }
    }

    #[test]
    fn csv_with_quotes_and_crlf() {
        let format = LoadFormat {
            field_term: b",".to_vec(),
            enclosed: Some(b'"'),
            optionally: true,
            line_term: b"\r\n".to_vec(),
            ..LoadFormat::default()
        };
        let data = b"1,\"a,b\",\"say \"\"hi\"\"\"\r\n2,NULL,\"NULL\"\r\n3,,x\r\n";
        for piece in [1, 4, 100] {
            let rows = split(format.clone(), data, piece);
            assert_eq!(rows.len(), 3, "piece {piece}");
            assert_eq!(rows[0], vec![f("1"), f("a,b"), f("say \"hi\"")]);
            assert_eq!(rows[1], vec![f("2"), None, f("NULL")]);
            assert_eq!(rows[2], vec![f("3"), f(""), f("x")]);
        }
    }

    #[test]
    fn line_prefix_skips_lines_without_it() {
        let format = LoadFormat {
            line_start: b"xxx".to_vec(),
            field_term: b",".to_vec(),
            ..LoadFormat::default()
        };
        let rows = split(format, b"xxx1,a\nnothing here\nxxx2,b\n", 3);
        assert_eq!(rows, vec![vec![f("1"), f("a")], vec![f("2"), f("b")]]);
    }

    #[test]
    fn long_rows_fail_and_empty_terminators_are_refused() {
        let mut s = Splitter::new(LoadFormat::default(), 8).expect("format");
        assert!(s.feed(b"0123456789abc", false, &mut |_| Ok(())).is_err());
        let empty = LoadFormat {
            field_term: Vec::new(),
            ..LoadFormat::default()
        };
        assert!(Splitter::new(empty, 8).is_err());
    }
}
