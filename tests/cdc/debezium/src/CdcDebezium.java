// Runs Debezium's MySQL connector (embedded engine, in-memory offsets and
// schema history, no snapshot of rows) against a server and prints each
// change event's value as one JSON line, until `count` events or
// `seconds` have passed. Arguments: port database count seconds.
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

public class CdcDebezium {
    static Properties config(String port, String database) {
        Properties p = new Properties();
        p.setProperty("name", "lockstep-cdc-test");
        p.setProperty("connector.class", "io.debezium.connector.mysql.MySqlConnector");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        p.setProperty("schema.history.internal", "io.debezium.relational.history.MemorySchemaHistory");
        p.setProperty("database.hostname", "127.0.0.1");
        p.setProperty("database.port", port);
        p.setProperty("database.user", "root");
        p.setProperty("database.password", "");
        p.setProperty("database.server.id", "5555");
        p.setProperty("topic.prefix", "lockstep");
        p.setProperty("database.include.list", database);
        p.setProperty("snapshot.mode", "no_data");
        p.setProperty("snapshot.locking.mode", "none");
        p.setProperty("decimal.handling.mode", "string");
        p.setProperty("include.schema.changes", "false");
        p.setProperty("key.converter.schemas.enable", "false");
        p.setProperty("value.converter.schemas.enable", "false");
        return p;
    }

    public static void main(String[] args) throws Exception {
        CountDownLatch left = new CountDownLatch(Integer.parseInt(args[2]));
        AtomicBoolean failed = new AtomicBoolean(false);
        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
            .using(config(args[0], args[1]))
            .notifying(r -> {
                if (r.value() != null) {
                    System.out.println(r.value());
                    System.out.flush();
                    left.countDown();
                }
            })
            .using((ok, message, error) -> {
                if (!ok) {
                    failed.set(true);
                    System.err.println("engine stopped: " + message);
                    if (error != null) error.printStackTrace();
                    while (left.getCount() > 0) left.countDown();
                }
            })
            .build();
        ExecutorService runner = Executors.newSingleThreadExecutor();
        runner.execute(engine);
        boolean all = left.await(Long.parseLong(args[3]), TimeUnit.SECONDS);
        engine.close();
        runner.shutdown();
        runner.awaitTermination(10, TimeUnit.SECONDS);
        System.exit(failed.get() ? 2 : all ? 0 : 1);
    }
}
