//! MySQL client/server wire protocol: packets, handshake, authentication, commands, result sets
