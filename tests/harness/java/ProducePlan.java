/*
 * Runs a produce plan (JSON lines, written by tests/harness/plan.py) with the Apache Kafka Java producer.
 *
 *   java -cp '<kafka libs>/*' ProducePlan.java <bootstrap> <plan.jsonl>
 *
 * Ops: {"op":"open","p":name,"props":{...}}, {"op":"init"|"begin"|"commit"|"abort"|"flush"|"close","p":name},
 * {"op":"send","p":name,"topic":t,"partition":n|null,"timestamp":ms|null,"key":b64|null,"value":b64|null,
 *  "headers":[[key, b64|null], ...],"sync":bool}, {"op":"sleep","ms":n},
 * {"op":"halt"}: print the acknowledged sends and stop the JVM at once (Runtime.halt), as a crashed producer
 *  would: no close, no commit or abort of an open transaction.
 * Prints one line per acknowledged send: "<topic> <partition> <offset>". Exits 1 if any send failed.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class ProducePlan {
    private static final Base64.Decoder B64 = Base64.getDecoder();

    private static byte[] bytes(JsonNode node) {
        return node == null || node.isNull() ? null : B64.decode(node.asText());
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        ObjectMapper json = new ObjectMapper();
        Map<String, KafkaProducer<byte[], byte[]>> producers = new HashMap<>();
        ConcurrentLinkedQueue<String> acked = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Exception> failures = new ConcurrentLinkedQueue<>();

        for (String line : Files.readAllLines(Path.of(args[1]))) {
            if (line.isBlank()) continue;
            JsonNode op = json.readTree(line);
            String name = op.path("p").asText("");
            KafkaProducer<byte[], byte[]> p = producers.get(name);
            switch (op.get("op").asText()) {
                case "open": {
                    Properties props = new Properties();
                    props.put("bootstrap.servers", bootstrap);
                    props.put("key.serializer", ByteArraySerializer.class.getName());
                    props.put("value.serializer", ByteArraySerializer.class.getName());
                    Iterator<Map.Entry<String, JsonNode>> it = op.get("props").fields();
                    while (it.hasNext()) {
                        Map.Entry<String, JsonNode> e = it.next();
                        props.put(e.getKey(), e.getValue().asText());
                    }
                    producers.put(name, new KafkaProducer<>(props));
                    break;
                }
                case "init": p.initTransactions(); break;
                case "begin": p.beginTransaction(); break;
                case "commit": p.commitTransaction(); break;
                case "abort": p.abortTransaction(); break;
                case "flush": p.flush(); break;
                case "close": p.close(); producers.remove(name); break;
                case "sleep": Thread.sleep(op.get("ms").asLong()); break;
                case "halt": {
                    acked.forEach(System.out::println);
                    System.out.flush();
                    Runtime.getRuntime().halt(failures.isEmpty() ? 0 : 1);
                    break;
                }
                case "send": {
                    List<Header> headers = new ArrayList<>();
                    for (JsonNode h : op.path("headers")) headers.add(new RecordHeader(h.get(0).asText(), bytes(h.get(1))));
                    Integer partition = op.path("partition").isNumber() ? op.get("partition").asInt() : null;
                    Long timestamp = op.path("timestamp").isNumber() ? op.get("timestamp").asLong() : null;
                    ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(op.get("topic").asText(), partition,
                        timestamp, bytes(op.get("key")), bytes(op.get("value")), headers);
                    var future = p.send(rec, (RecordMetadata md, Exception e) -> {
                        if (e != null) failures.add(e);
                        else acked.add(md.topic() + " " + md.partition() + " " + md.offset());
                    });
                    if (op.path("sync").asBoolean(false)) future.get();
                    break;
                }
                default: throw new IllegalArgumentException("unknown op " + line);
            }
        }
        for (KafkaProducer<byte[], byte[]> p : producers.values()) p.close();
        acked.forEach(System.out::println);
        for (Exception e : failures) e.printStackTrace();
        System.exit(failures.isEmpty() ? 0 : 1);
    }
}
