//! BEGIN ... END blocks (declarations, handlers) and IF / CASE branches.

use super::{Compiler, Deferred, Label};
use crate::parser::{BinaryOp, Expr, HandlerCondition, SpDecl, SpStmt};
use crate::routine::{Handler, Op};
use lockstep_types::Error;

impl Compiler {
    pub(super) fn block(
        &mut self,
        label: &Option<String>,
        decls: &[SpDecl],
        body: &[SpStmt],
    ) -> Result<(), Error> {
        self.scopes.push(Vec::new());
        self.conditions.push(Vec::new());
        self.cursors.push(Vec::new());
        self.names = None;
        self.labels.push(Label {
            name: label.clone().unwrap_or_default(),
            start: None,
            leaves: Vec::new(),
        });
        let mut handlers = Vec::new();
        for d in decls {
            self.declare(d, &mut handlers)?;
        }
        let from = self.steps.len();
        self.list(body)?;
        let to = self.steps.len();
        for (h, _) in &handlers {
            let handler: &mut Handler = &mut self.handlers[*h];
            handler.from = from;
            handler.to = to;
            handler.exit_to = to;
        }
        self.close_label();
        for (h, body) in handlers {
            self.deferred.push(Deferred {
                handler: h,
                body,
                scopes: self.scopes.clone(),
                conditions: self.conditions.clone(),
                cursors: self.cursors.clone(),
            });
        }
        self.scopes.pop();
        self.conditions.pop();
        self.cursors.pop();
        self.names = None;
        Ok(())
    }

    fn declare(&mut self, d: &SpDecl, handlers: &mut Vec<(usize, SpStmt)>) -> Result<(), Error> {
        match d {
            SpDecl::Var {
                names,
                data_type,
                default,
            } => {
                let mut slots = Vec::new();
                for n in names {
                    let slot = self.slot_types.len();
                    self.slot_types.push(*data_type);
                    slots.push(slot);
                    let scope = self.scopes.last_mut().expect("a block is open");
                    scope.push((n.to_lowercase(), slot));
                }
                // The default is evaluated without the new names in scope.
                self.emit(Op::Init {
                    slots,
                    default: default.clone(),
                });
                self.names = None;
            }
            SpDecl::Condition { name, condition } => {
                let scope = self.conditions.last_mut().expect("a block is open");
                scope.push((name.to_lowercase(), condition.clone()));
            }
            SpDecl::Cursor { name, query } => {
                let i = self.queries.len();
                self.queries.push((**query).clone());
                let scope = self.cursors.last_mut().expect("a block is open");
                scope.push((name.to_lowercase(), i));
            }
            SpDecl::Handler {
                exit,
                conditions,
                body,
            } => {
                let conditions = conditions
                    .iter()
                    .map(|c| match c {
                        HandlerCondition::Named(n) => self.named(n),
                        other => Ok(other.clone()),
                    })
                    .collect::<Result<_, Error>>()?;
                self.handlers.push(Handler {
                    exit: *exit,
                    conditions,
                    from: 0,
                    to: 0,
                    body: 0,
                    exit_to: 0,
                });
                handlers.push((self.handlers.len() - 1, (**body).clone()));
            }
        }
        Ok(())
    }

    /// IF (conditions) or CASE (operand = value, or conditions).
    pub(super) fn branches(
        &mut self,
        operand: Option<&Expr>,
        branches: &[(Expr, Vec<SpStmt>)],
        otherwise: Option<&[SpStmt]>,
        case: bool,
    ) -> Result<(), Error> {
        let mut ends = Vec::new();
        for (cond, body) in branches {
            let test = match operand {
                Some(o) => Expr::Binary {
                    op: BinaryOp::Eq,
                    left: Box::new(o.clone()),
                    right: Box::new(cond.clone()),
                },
                None => cond.clone(),
            };
            let at = self.emit(Op::JumpUnless(test, 0));
            self.list(body)?;
            ends.push(self.emit(Op::Jump(0)));
            let next = self.steps.len();
            self.patch(at, next);
        }
        match otherwise {
            Some(body) => self.list(body)?,
            None if case => {
                self.emit(Op::CaseNotFound);
            }
            None => {}
        }
        let end = self.steps.len();
        for at in ends {
            self.patch(at, end);
        }
        Ok(())
    }
}
