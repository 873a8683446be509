// cdcdump reads lockstep's MySQL binlog stream with go-mysql's
// BinlogSyncer (GTID auto-position) and prints each row change as one
// JSON line: {"gtid", "kind", "schema", "table", "before", "after"}.
// It stops at the first heartbeat (the stream has reached the log's end)
// or after -timeout (with -stay: only then). With -semisync it asks for semi-synchronous
// replication and acknowledges the events that ask for it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"
)

type change struct {
	GTID   string         `json:"gtid"`
	Kind   string         `json:"kind"`
	Schema string         `json:"schema"`
	Table  string         `json:"table"`
	Before map[string]any `json:"before,omitempty"`
	After  map[string]any `json:"after,omitempty"`
}

type summary struct {
	Summary   bool   `json:"summary"`
	Events    int    `json:"events"`
	SemiSync  bool   `json:"semisync"`
	LastGTIDs string `json:"gtid_set"`
}

// row pairs column names with the decoded values. go-mysql decodes
// integers as signed; the table map's signedness makes them unsigned
// where the column is (as canal does with the table's schema). []byte
// becomes a string so that the JSON shows text (BLOBs are ASCII here).
func row(names []string, types []byte, unsigned map[int]bool, values []any) map[string]any {
	out := make(map[string]any, len(values))
	for i, v := range values {
		name := fmt.Sprintf("@%d", i+1)
		if i < len(names) {
			name = names[i]
		}
		switch x := v.(type) {
		case []byte:
			v = string(x)
		case int8:
			if unsigned[i] {
				v = uint8(x)
			}
		case int16:
			if unsigned[i] {
				v = uint16(x)
			}
		case int32:
			if unsigned[i] && i < len(types) && types[i] == mysql.MYSQL_TYPE_INT24 {
				v = uint32(x) & 0xffffff
			} else if unsigned[i] {
				v = uint32(x)
			}
		case int64:
			if unsigned[i] {
				v = uint64(x)
			}
		}
		out[name] = v
	}
	return out
}

func emit(enc *json.Encoder, gtid string, ev *replication.BinlogEvent, e *replication.RowsEvent) {
	names := e.Table.ColumnNameString()
	unsigned := e.Table.UnsignedMap()
	row := func(values []any) map[string]any { return row(names, e.Table.ColumnType, unsigned, values) }
	base := change{GTID: gtid, Schema: string(e.Table.Schema), Table: string(e.Table.Table)}
	switch ev.Header.EventType {
	case replication.WRITE_ROWS_EVENTv2:
		for _, r := range e.Rows {
			c := base
			c.Kind, c.After = "insert", row(r)
			_ = enc.Encode(c)
		}
	case replication.DELETE_ROWS_EVENTv2:
		for _, r := range e.Rows {
			c := base
			c.Kind, c.Before = "delete", row(r)
			_ = enc.Encode(c)
		}
	case replication.UPDATE_ROWS_EVENTv2:
		for i := 0; i+1 < len(e.Rows); i += 2 {
			c := base
			c.Kind, c.Before, c.After = "update", row(e.Rows[i]), row(e.Rows[i+1])
			_ = enc.Encode(c)
		}
	}
}

func main() {
	port := flag.Int("port", 3306, "source port")
	since := flag.String("since", "", "GTID set the reader already has")
	semi := flag.Bool("semisync", false, "ask for semi-synchronous replication")
	timeout := flag.Duration("timeout", 60*time.Second, "give up after")
	stay := flag.Bool("stay", false, "go on past heartbeats (until killed or -timeout)")
	verbose := flag.Bool("v", false, "go-mysql's log on stderr")
	useCanal := flag.Bool("canal", false, "read through go-mysql's canal instead")
	flag.Parse()

	cfg := replication.BinlogSyncerConfig{
		ServerID:        4242,
		Flavor:          mysql.MySQLFlavor,
		Host:            "127.0.0.1",
		Port:            uint16(*port),
		User:            "root",
		HeartbeatPeriod: 300 * time.Millisecond,
		SemiSyncEnabled: *semi,
		UseDecimal:      false,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	gset, err := mysql.ParseGTIDSet(mysql.MySQLFlavor, *since)
	if err != nil {
		fail(err)
	}
	if *useCanal {
		runCanal(*port, gset, *timeout)
		return
	}
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	streamer, err := syncer.StartSyncGTID(gset)
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	enc := json.NewEncoder(os.Stdout)
	done := gset.Clone()
	sum := summary{Summary: true}
	gtid := ""
	for {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			fail(err)
		}
		sum.Events++
		switch e := ev.Event.(type) {
		case *replication.GTIDEvent:
			u, _ := uuid.FromBytes(e.SID)
			gtid = fmt.Sprintf("%s:%d", u, e.GNO)
			_ = done.Update(gtid)
		case *replication.RowsEvent:
			emit(enc, gtid, ev, e)
		case *replication.GenericEvent:
			if ev.Header.EventType == replication.HEARTBEAT_EVENT && !*stay {
				sum.LastGTIDs = done.String()
				_ = enc.Encode(sum)
				return
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cdcdump:", err)
	os.Exit(1)
}
