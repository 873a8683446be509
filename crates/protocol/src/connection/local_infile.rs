//! COM_QUERY with its query attributes, its results sent one statement at
//! a time, and the LOAD DATA LOCAL INFILE
//! exchange: after a query whose handler waits for a file, the server
//! sends 0xFB and the file name, the client sends the file in packets and
//! an empty one, and the server replies with the statement's result. The
//! handler parses and inserts as packets arrive; nothing here holds the
//! file.

use super::{Flow, Session, ER_MALFORMED_PACKET};
use crate::handshake::caps;
use crate::packet::PacketReader;
use crate::{query_attrs, Handler, ProtocolError, Response};
use lockstep_types::Error;
use tokio::io::{AsyncRead, AsyncWrite};

/// The header of a LOCAL INFILE request.
const LOCAL_INFILE_REQUEST: u8 = 0xFB;

impl<H: Handler> Session<'_, H> {
    /// COM_QUERY: attributes first for a client with
    /// CLIENT_QUERY_ATTRIBUTES, then the statements.
    pub(super) async fn query<S>(
        &mut self,
        stream: &mut S,
        body: &[u8],
    ) -> Result<Flow, ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        let sql = if self.caps & caps::QUERY_ATTRIBUTES != 0 {
            match query_attrs::split_query(body) {
                Ok((attributes, sql)) => {
                    self.handler.query_attributes(attributes);
                    sql
                }
                Err(_) => {
                    self.send_malformed();
                    return Ok(Flow::Continue);
                }
            }
        } else {
            body
        };
        match self.handler.statement_text(sql) {
            Ok(sql) => {
                let first = self.handler.query(&sql, self.multi_statements).await;
                self.send_query_results(stream, first).await
            }
            Err(e) => {
                self.send_error(&e);
                Ok(Flow::Continue)
            }
        }
    }

    /// 1835, for a command packet that does not decode.
    pub(super) fn send_malformed(&mut self) {
        self.send_raw_error(
            ER_MALFORMED_PACKET,
            "HY000",
            "Malformed communication packet.",
        );
    }

    /// A COM_QUERY's results from `first` on, each sent as its statement
    /// ends: flagged "more results" while another follows, and flushed
    /// before the handler runs the next statement (a client with a read
    /// timeout reads every result in time, however long the batch). An
    /// error ends the list; a LOCAL INFILE request may stand in for the
    /// next result (None while the handler waits for the file).
    pub(super) async fn send_query_results<S>(
        &mut self,
        stream: &mut S,
        first: Option<Result<Response, Error>>,
    ) -> Result<Flow, ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        let mut next = first;
        let mut answered = false;
        while let Some(r) = next {
            answered = true;
            let resp = match r {
                Ok(resp) => resp,
                Err(e) => {
                    self.send_error(&e);
                    return Ok(Flow::Continue);
                }
            };
            let more = self.handler.more_results();
            self.send_response(stream, &resp, more, false, None).await?;
            // A result set that failed midway ended the batch too.
            if !self.handler.more_results() {
                return Ok(Flow::Continue);
            }
            self.writer.flush(stream).await?;
            next = self.handler.next_result().await;
        }
        if let Some(name) = self.handler.local_infile() {
            self.writer.packet(|o| {
                o.push(LOCAL_INFILE_REQUEST);
                o.extend_from_slice(&name);
            });
            return Ok(Flow::LocalInfile);
        }
        if !answered {
            // Nothing to run (a batch of comments): MySQL answers OK.
            self.send_ok(&crate::OkInfo::default(), 0);
        }
        Ok(Flow::Continue)
    }

    /// Reads the file's packets up to the empty one, feeding each to the
    /// handler, then sends the statement's result (and those after it).
    pub(super) async fn local_infile<S>(
        &mut self,
        stream: &mut S,
        reader: &mut PacketReader,
    ) -> Result<Flow, ProtocolError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        self.writer.flush(stream).await?;
        let mut seq = self.writer.seq();
        let max = self.config.max_allowed_packet;
        loop {
            let packet = reader
                .read(stream, &mut seq, max)
                .await?
                .ok_or(ProtocolError::UnexpectedEof)?;
            if packet.is_empty() {
                break;
            }
            self.handler.infile_data(packet).await;
        }
        self.writer.set_seq(seq);
        let result = self.handler.infile_end().await;
        self.send_query_results(stream, Some(result)).await
    }
}
