//! The AST of MySQL 8's role statements (parser/roles.rs parses them,
//! session/roles.rs runs them).

use super::ast::UserName;

/// Which roles a SET ROLE / SET DEFAULT ROLE names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoleSpec {
    /// SET ROLE DEFAULT: the account's default roles.
    Default,
    None,
    /// ALL [EXCEPT r, ...]: every granted role but those listed.
    All {
        except: Vec<UserName>,
    },
    List(Vec<UserName>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoleStmt {
    /// CREATE ROLE [IF NOT EXISTS] r, ...
    Create {
        if_not_exists: bool,
        roles: Vec<UserName>,
    },
    /// DROP ROLE [IF EXISTS] r, ...
    Drop {
        if_exists: bool,
        roles: Vec<UserName>,
    },
    /// GRANT r, ... TO u, ... [WITH ADMIN OPTION]
    Grant {
        roles: Vec<UserName>,
        to: Vec<UserName>,
        admin: bool,
    },
    /// REVOKE r, ... FROM u, ...
    Revoke {
        roles: Vec<UserName>,
        from: Vec<UserName>,
    },
    /// SET ROLE ...
    Set(RoleSpec),
    /// SET DEFAULT ROLE ... TO u, ... / ALTER USER u DEFAULT ROLE ...
    /// (DEFAULT is not allowed there: the parser refuses it).
    SetDefault {
        spec: RoleSpec,
        users: Vec<UserName>,
    },
    /// SHOW GRANTS FOR u USING r, ...
    ShowGrants {
        user: UserName,
        using: Vec<UserName>,
    },
}
