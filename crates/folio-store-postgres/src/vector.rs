//! pgvector's `vector` in its binary wire format: dimension (u16), an unused
//! u16, then the values as big-endian f32.

use bytes::{BufMut, BytesMut};
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

#[derive(Debug, Clone, PartialEq)]
pub struct Vector(pub Vec<f32>);

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for Vector {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        let dim = u16::try_from(self.0.len()).map_err(|_| "a vector of more than 65535 values")?;
        out.reserve(4 + 4 * self.0.len());
        out.put_u16(dim);
        out.put_u16(0);
        for x in &self.0 {
            out.put_f32(*x);
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "vector"
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Vector {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Vector, BoxError> {
        if raw.len() < 4 {
            return Err("a vector shorter than its header".into());
        }
        let dim = u16::from_be_bytes([raw[0], raw[1]]) as usize;
        let body = &raw[4..];
        if body.len() != dim * 4 {
            return Err(format!("a {dim}-d vector of {} bytes", body.len()).into());
        }
        Ok(Vector(
            body.chunks_exact(4)
                .map(|b| f32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ))
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "vector"
    }
}
