/*
 * The broker's own view of groups, transactions and producers, as JSON on stdout (Kafka 3.9 and 4.x clients;
 * used by tests/harness/internal_corpus.py).
 *
 *   java -cp '<kafka libs>/*' AdminOracle.java <bootstrap> oracle <groups> <share groups> <producer topics> [on-stdin]
 *       Each list is comma-separated, or "-" for none. With on-stdin it first makes all the calls once (to warm up),
 *       prints "ready" and waits for a line on stdin, so that the recording itself takes a fraction of a second.
 *       Prints {"consumer_groups_listed", "groups_listed" (4.x:
 *       Admin.listGroups, with each group's protocol type), "groups" (describeConsumerGroups and
 *       listConsumerGroupOffsets of each listed group of <groups>), "share_groups" (4.x: describeShareGroups and
 *       listShareGroupOffsets: start offset, leader epoch and lag), "transactions" (listTransactions, then describeTransactions of every id listed),
 *       "producers" (describeProducers of every partition of the topics)}.
 *   java -cp '<kafka libs>/*' AdminOracle.java <bootstrap> wait-txn <transactional id> <state> <timeout ms>
 *       Polls describeTransactions until the transaction is in <state> (as Kafka prints it, e.g. CompleteAbort);
 *       prints {"state": ...} and exits 0, or exits 1 at the timeout.
 *
 * The 4.x-only Admin calls (listGroups, share groups) go through reflection so the file compiles against both
 * majors' clients; on 3.9 those keys are absent.
 */

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

public class AdminOracle {
    private static List<String> names(String arg) {
        return arg.equals("-") ? List.of() : Arrays.asList(arg.split(","));
    }

    private static Object opt(Object value) {
        if (value instanceof Optional) return ((Optional<?>) value).orElse(null);
        if (value instanceof OptionalInt) {
            OptionalInt o = (OptionalInt) value;
            return o.isPresent() ? (Object) o.getAsInt() : null;
        }
        if (value instanceof OptionalLong) {
            OptionalLong o = (OptionalLong) value;
            return o.isPresent() ? (Object) o.getAsLong() : null;
        }
        return value;
    }

    private static String str(Object value) {
        Object v = opt(value);
        return v == null ? null : v.toString();
    }

    private static String key(TopicPartition tp) {
        return tp.topic() + "-" + tp.partition();
    }

    private static List<List<Object>> partitions(Collection<TopicPartition> tps) {
        List<TopicPartition> sorted = new ArrayList<>(tps);
        sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        List<List<Object>> out = new ArrayList<>();
        for (TopicPartition tp : sorted) out.add(List.of(tp.topic(), tp.partition()));
        return out;
    }

    /** A public method `name` of `target` taking `args`, called by reflection (the 4.x-only Admin API). */
    private static Object call(Object target, String name, Object... args) throws Exception {
        for (Method m : target.getClass().getMethods()) {
            if (!m.getName().equals(name) || m.getParameterCount() != args.length) continue;
            Class<?>[] types = m.getParameterTypes();
            boolean fits = true;
            for (int i = 0; i < args.length; i++) fits &= types[i].isInstance(args[i]);
            if (!fits) continue;
            m.setAccessible(true);
            return m.invoke(target, args);
        }
        throw new NoSuchMethodException(target.getClass().getName() + "." + name);
    }

    private static boolean has(Class<?> type, String name) {
        return Arrays.stream(type.getMethods()).anyMatch(m -> m.getName().equals(name));
    }

    private static Object get(Object future) throws Exception {
        return ((KafkaFuture<?>) future).get();
    }

    private static Map<String, Object> member(String id, String clientId, String host, Collection<TopicPartition> tps) {
        Map<String, Object> m = new TreeMap<>();
        m.put("member_id", id);
        m.put("client_id", clientId);
        m.put("host", host);
        m.put("assignment", partitions(tps));
        return m;
    }

    private static Map<String, Object> offset(long offset, Object leaderEpoch, String metadata) {
        Map<String, Object> m = new TreeMap<>();
        m.put("offset", offset);
        m.put("leader_epoch", opt(leaderEpoch));
        m.put("metadata", metadata);
        return m;
    }

    private static Map<String, Object> groups(Admin admin, List<String> wanted, Set<String> listed) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        List<String> present = new ArrayList<>();
        for (String g : wanted) if (listed.contains(g)) present.add(g);
        if (present.isEmpty()) return out;
        Map<String, ConsumerGroupDescription> described = admin.describeConsumerGroups(present).all().get();
        for (String g : present) {
            ConsumerGroupDescription d = described.get(g);
            Map<String, Object> e = new TreeMap<>();
            e.put("type", str(d.type()));
            e.put("state", str(d.state()));
            e.put("protocol", d.partitionAssignor() == null || d.partitionAssignor().isEmpty()
                ? null : d.partitionAssignor());
            List<Map<String, Object>> members = new ArrayList<>();
            for (MemberDescription m : d.members()) {
                members.add(member(m.consumerId(), m.clientId(), m.host(), m.assignment().topicPartitions()));
            }
            members.sort(Comparator.comparing(m -> (String) m.get("member_id")));
            e.put("members", members);
            Map<String, Object> offsets = new TreeMap<>();
            Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get();
            for (Map.Entry<TopicPartition, OffsetAndMetadata> c : committed.entrySet()) {
                OffsetAndMetadata om = c.getValue();
                if (om != null) offsets.put(key(c.getKey()), offset(om.offset(), om.leaderEpoch(), om.metadata()));
            }
            e.put("offsets", offsets);
            out.put(g, e);
        }
        return out;
    }

    private static Map<String, Object> shareGroups(Admin admin, List<String> wanted) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        if (wanted.isEmpty()) return out;
        Map<?, ?> described = (Map<?, ?>) get(call(call(admin, "describeShareGroups", wanted), "all"));
        for (String g : wanted) {
            Object d = described.get(g);
            Map<String, Object> e = new TreeMap<>();
            e.put("type", "Share");
            e.put("state", str(call(d, "groupState")));
            e.put("protocol", null);
            List<Map<String, Object>> members = new ArrayList<>();
            for (Object m : (Collection<?>) call(d, "members")) {
                @SuppressWarnings("unchecked")
                Collection<TopicPartition> tps = (Collection<TopicPartition>) call(call(m, "assignment"), "topicPartitions");
                members.add(member((String) call(m, "consumerId"), (String) call(m, "clientId"),
                                   (String) call(m, "host"), tps));
            }
            members.sort(Comparator.comparing(m -> (String) m.get("member_id")));
            e.put("members", members);
            Object spec = Class.forName("org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec")
                .getConstructor().newInstance();
            Object result = call(admin, "listShareGroupOffsets", Map.of(g, spec));
            Map<?, ?> infos = (Map<?, ?>) get(call(result, "partitionsToOffsetInfo", g));
            Map<String, Object> offsets = new TreeMap<>();
            for (Map.Entry<?, ?> c : infos.entrySet()) {
                Object info = c.getValue();
                if (info == null) continue;
                Map<String, Object> o = offset((Long) call(info, "startOffset"), call(info, "leaderEpoch"), null);
                o.put("lag", opt(call(info, "lag")));  // what the start offset alone does not say
                offsets.put(key((TopicPartition) c.getKey()), o);
            }
            e.put("offsets", offsets);
            out.put(g, e);
        }
        return out;
    }

    private static Map<String, Object> transactions(Admin admin) throws Exception {
        List<String> ids = new ArrayList<>();
        for (TransactionListing l : admin.listTransactions().all().get()) ids.add(l.transactionalId());
        Map<String, Object> out = new TreeMap<>();
        if (ids.isEmpty()) return out;
        for (Map.Entry<String, TransactionDescription> t : admin.describeTransactions(ids).all().get().entrySet()) {
            TransactionDescription d = t.getValue();
            Map<String, Object> e = new TreeMap<>();
            e.put("producer_id", d.producerId());
            e.put("producer_epoch", d.producerEpoch());
            e.put("state", d.state().toString());
            e.put("timeout_ms", d.transactionTimeoutMs());
            e.put("start_ms", opt(d.transactionStartTimeMs()));
            e.put("partitions", partitions(d.topicPartitions()));
            out.put(t.getKey(), e);
        }
        return out;
    }

    private static Map<String, Object> producers(Admin admin, List<String> topics) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        if (topics.isEmpty()) return out;
        List<TopicPartition> tps = new ArrayList<>();
        for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get().values()) {
            d.partitions().forEach(p -> tps.add(new TopicPartition(d.name(), p.partition())));
        }
        Map<TopicPartition, DescribeProducersResult.PartitionProducerState> all =
            admin.describeProducers(tps).all().get();
        for (Map.Entry<TopicPartition, DescribeProducersResult.PartitionProducerState> p : all.entrySet()) {
            List<Map<String, Object>> states = new ArrayList<>();
            for (ProducerState s : p.getValue().activeProducers()) {
                Map<String, Object> e = new TreeMap<>();
                e.put("producer_id", s.producerId());
                e.put("producer_epoch", s.producerEpoch());
                e.put("last_sequence", s.lastSequence());
                e.put("last_timestamp", s.lastTimestamp());
                e.put("coordinator_epoch", opt(s.coordinatorEpoch()));
                e.put("current_txn_start_offset", opt(s.currentTransactionStartOffset()));
                states.add(e);
            }
            states.sort(Comparator.comparingLong(s -> (Long) s.get("producer_id")));
            out.put(key(p.getKey()), states);
        }
        return out;
    }

    private static Map<String, Object> oracle(Admin admin, String[] args) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        Map<String, Object> consumerListed = new TreeMap<>();
        for (ConsumerGroupListing l : admin.listConsumerGroups().all().get()) {
            Map<String, Object> e = new TreeMap<>();
            e.put("type", str(l.type()));
            e.put("state", str(l.state()));
            e.put("simple", l.isSimpleConsumerGroup());
            consumerListed.put(l.groupId(), e);
        }
        out.put("consumer_groups_listed", consumerListed);
        if (has(Admin.class, "listGroups")) {
            Map<String, Object> listed = new TreeMap<>();
            for (Object l : (Collection<?>) get(call(call(admin, "listGroups"), "all"))) {
                Map<String, Object> e = new TreeMap<>();
                e.put("type", str(call(l, "type")));
                e.put("protocol_type", call(l, "protocol"));
                e.put("state", str(call(l, "groupState")));
                listed.put((String) call(l, "groupId"), e);
            }
            out.put("groups_listed", listed);
        }
        out.put("groups", groups(admin, names(args[2]), consumerListed.keySet()));
        if (has(Admin.class, "describeShareGroups")) out.put("share_groups", shareGroups(admin, names(args[3])));
        out.put("transactions", transactions(admin));
        out.put("producers", producers(admin, names(args[4])));
        return out;
    }

    private static int waitTxn(Admin admin, String id, String state, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        String seen = null;
        while (System.currentTimeMillis() < deadline) {
            seen = admin.describeTransactions(List.of(id)).all().get().get(id).state().toString();
            if (seen.equals(state)) break;
            Thread.sleep(500);
        }
        System.out.println(new ObjectMapper().writeValueAsString(Map.of("state", String.valueOf(seen))));
        return state.equals(seen) ? 0 : 1;
    }

    public static void main(String[] args) throws Exception {
        int status = 0;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", args[0]))) {
            if (args[1].equals("wait-txn")) {
                status = waitTxn(admin, args[2], args[3], Long.parseLong(args[4]));
            } else {
                if (args.length > 5 && args[5].equals("on-stdin")) {
                    oracle(admin, args);
                    System.out.println("ready");
                    System.out.flush();
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                }
                System.out.println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                    .writeValueAsString(oracle(admin, args)));
            }
        }
        System.exit(status);
    }
}
