package main

// The same row changes read through go-mysql's canal, which also reads
// each table's schema (SHOW FULL COLUMNS, SHOW INDEX) and converts the
// values with it; it stops once it has caught up with SHOW MASTER STATUS.

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/go-mysql-org/go-mysql/canal"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"
)

type printer struct {
	canal.DummyEventHandler
	enc  *json.Encoder
	gtid string
}

func (p *printer) OnGTID(_ *replication.EventHeader, e mysql.BinlogGTIDEvent) error {
	if g, ok := e.(*replication.GTIDEvent); ok {
		u, _ := uuid.FromBytes(g.SID)
		p.gtid = fmt.Sprintf("%s:%d", u, g.GNO)
	}
	return nil
}

func (p *printer) OnRow(e *canal.RowsEvent) error {
	names := make([]string, len(e.Table.Columns))
	for i, c := range e.Table.Columns {
		names[i] = c.Name
	}
	row := func(values []any) map[string]any { return row(names, nil, nil, values) }
	base := change{GTID: p.gtid, Schema: e.Table.Schema, Table: e.Table.Name}
	step := 1
	if e.Action == canal.UpdateAction {
		step = 2
	}
	for i := 0; i+step-1 < len(e.Rows); i += step {
		c := base
		switch e.Action {
		case canal.InsertAction:
			c.Kind, c.After = "insert", row(e.Rows[i])
		case canal.DeleteAction:
			c.Kind, c.Before = "delete", row(e.Rows[i])
		default:
			c.Kind, c.Before, c.After = "update", row(e.Rows[i]), row(e.Rows[i+1])
		}
		if err := p.enc.Encode(c); err != nil {
			return err
		}
	}
	return nil
}

func (p *printer) String() string { return "cdcdump" }

func runCanal(port int, since mysql.GTIDSet, timeout time.Duration) {
	cfg := canal.NewDefaultConfig()
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", port)
	cfg.User = "root"
	cfg.Password = ""
	cfg.ServerID = 4343
	cfg.Dump.ExecutionPath = "" // no mysqldump: the binlog only
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := canal.NewCanal(cfg)
	if err != nil {
		fail(err)
	}
	c.SetEventHandler(&printer{enc: json.NewEncoder(os.Stdout)})
	done := make(chan error, 1)
	go func() { done <- c.StartFromGTID(since) }()
	caught := make(chan error, 1)
	go func() { caught <- c.CatchMasterPos(timeout) }()
	select {
	case err = <-caught:
	case err = <-done:
	}
	c.Close()
	if err != nil {
		fail(err)
	}
}
