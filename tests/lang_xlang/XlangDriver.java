// Java driver of the cross-language tests: writes test vectors with the classes that
// `vigil gen --lang java` generated, and reads such files back in canonical form (see
// xlang_common.py). Generic over the schema: it uses each class's FIELD_NAMES and
// FIELD_TYPES.
//
//   XlangDriver write PKG VECTORS OUT.bin
//   XlangDriver read PKG VECTORS IN.bin OUT.json
//   XlangDriver range PKG RECORD     unsigned fields refuse -1 and max+1
//   XlangDriver malformed PKG RECORD  cut records are refused
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class XlangDriver {
    // ---- a small JSON reader: objects, arrays, strings, numbers (kept as text), literals
    private final String s;
    private int i;

    private XlangDriver(String s) { this.s = s; }

    private void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i)))
            i++;
    }

    private Object parse() {
        ws();
        char c = s.charAt(i);
        if (c == '{') {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            ws();
            if (s.charAt(i) == '}') { i++; return m; }
            while (true) {
                ws();
                String k = (String) parse();
                ws();
                i++; // ':'
                m.put(k, parse());
                ws();
                if (s.charAt(i++) == '}')
                    return m;
            }
        }
        if (c == '[') {
            List<Object> l = new ArrayList<>();
            i++;
            ws();
            if (s.charAt(i) == ']') { i++; return l; }
            while (true) {
                l.add(parse());
                ws();
                if (s.charAt(i++) == ']')
                    return l;
            }
        }
        if (c == '"') {
            StringBuilder b = new StringBuilder();
            i++;
            while (s.charAt(i) != '"') {
                char d = s.charAt(i++);
                if (d != '\\') { b.append(d); continue; }
                char e = s.charAt(i++);
                switch (e) {
                case 'n': b.append('\n'); break;
                case 't': b.append('\t'); break;
                case 'r': b.append('\r'); break;
                case 'b': b.append('\b'); break;
                case 'f': b.append('\f'); break;
                case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                default: b.append(e);
                }
            }
            i++;
            return b.toString();
        }
        if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
        if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
        if (s.startsWith("null", i)) { i += 4; return null; }
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0)
            i++;
        return new BigDecimal(s.substring(start, i)); // numbers keep their exact text
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> vectors(String path) throws IOException {
        String text = Files.readString(Path.of(path), StandardCharsets.UTF_8);
        Map<String, Object> top = (Map<String, Object>) new XlangDriver(text).parse();
        return (List<Map<String, Object>>) (Object) top.get("records");
    }

    // ---- values
    static double toDouble(Object v) {
        if (v instanceof BigDecimal d)
            return Double.parseDouble(d.toString()); // the nearest double, as Python's float()
        String t = (String) v;
        if (t.equals("inf")) return Double.POSITIVE_INFINITY;
        if (t.equals("-inf")) return Double.NEGATIVE_INFINITY;
        if (t.equals("nan")) return Double.NaN;
        return Double.parseDouble(t);
    }

    static BigInteger big(Object v) { return ((BigDecimal) v).toBigIntegerExact(); }

    static Object value(String pkg, String type, Object v) throws Exception {
        switch (type) {
        case "int8": return big(v).byteValueExact();
        case "int16": return big(v).shortValueExact();
        case "int32": return big(v).intValueExact();
        case "int64": return big(v).longValueExact();
        case "uint8": return big(v).shortValueExact();
        case "uint16": return big(v).intValueExact();
        case "uint32": return big(v).longValueExact();
        case "uint64": {
            BigInteger b = big(v);
            if (b.signum() < 0 || b.bitLength() > 64)
                throw new IllegalArgumentException("not a uint64: " + b);
            return b.longValue(); // the two's complement bits
        }
        case "float64": return toDouble(v);
        case "bool": return (Boolean) v;
        case "string": return (String) v;
        case "bytes": return hexBytes((String) v);
        case "entity": {
            List<?> l = (List<?>) v;
            Class<?> ref = Class.forName("vigil." + pkg + ".EntityRef");
            return ref.getConstructor(long.class, int.class)
                .newInstance(big(l.get(0)).longValue(), big(l.get(1)).intValue());
        }
        default: throw new IllegalArgumentException("unknown type " + type);
        }
    }

    static byte[] hexBytes(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int k = 0; k < b.length; k++)
            b[k] = (byte) Integer.parseInt(h.substring(2 * k, 2 * k + 2), 16);
        return b;
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b)
            sb.append(String.format("%02x", x & 0xFF));
        return sb.toString();
    }

    static String quote(String v) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : v.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String canon(String type, Object v) throws Exception {
        switch (type) {
        case "uint64": return Long.toUnsignedString((Long) v);
        case "float64":
            return "\"" + String.format("%016x", Double.doubleToRawLongBits((Double) v)) + "\"";
        case "string": return quote((String) v);
        case "bytes": return "\"" + hex((byte[]) v) + "\"";
        case "entity": {
            long id = (Long) v.getClass().getMethod("id").invoke(v);
            int gen = (Integer) v.getClass().getMethod("gen").invoke(v);
            return "[" + Long.toUnsignedString(id) + ", " + Integer.toUnsignedLong(gen) + "]";
        }
        default: return String.valueOf(v); // integers (fit their Java type), bool
        }
    }

    static Class<?> cls(String pkg, String name) throws ClassNotFoundException {
        return Class.forName("vigil." + pkg + "." + name);
    }

    static String[] names(Class<?> c) throws Exception { return (String[]) c.getField("FIELD_NAMES").get(null); }

    static String[] types(Class<?> c) throws Exception { return (String[]) c.getField("FIELD_TYPES").get(null); }

    @SuppressWarnings("unchecked")
    static Object build(String pkg, Map<String, Object> vec) throws Exception {
        Class<?> c = cls(pkg, (String) vec.get("type"));
        Object rec = c.getConstructor().newInstance();
        String[] n = names(c), t = types(c);
        Map<String, String> typeOf = new HashMap<>();
        for (int k = 0; k < n.length; k++)
            typeOf.put(n[k], t[k]);
        Map<String, Object> vals = (Map<String, Object>) vec.getOrDefault("values", Map.of());
        for (Map.Entry<String, Object> e : vals.entrySet()) {
            if (!typeOf.containsKey(e.getKey()))
                throw new IllegalArgumentException(c.getName() + " has no field " + e.getKey());
            c.getField(e.getKey()).set(rec, value(pkg, typeOf.get(e.getKey()), e.getValue()));
        }
        return rec;
    }

    static byte[] encode(Object rec) throws Exception {
        try {
            return (byte[]) rec.getClass().getMethod("encode").invoke(rec);
        } catch (InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    static Object decode(Class<?> c, ByteBuffer buf) throws Exception {
        try {
            return c.getMethod("decode", ByteBuffer.class).invoke(null, buf);
        } catch (InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    static void write(String pkg, String vectors, String out) throws Exception {
        try (FileOutputStream f = new FileOutputStream(out)) {
            for (Map<String, Object> vec : vectors(vectors))
                f.write(encode(build(pkg, vec)));
        }
    }

    static void read(String pkg, String vectors, String in, String out) throws Exception {
        ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(Path.of(in)));
        StringBuilder sb = new StringBuilder("[");
        for (Map<String, Object> vec : vectors(vectors)) {
            Class<?> c = cls(pkg, (String) vec.get("type"));
            Object rec = decode(c, buf);
            String[] n = names(c), t = types(c);
            sb.append(sb.length() > 1 ? ", " : "").append("{\"type\": ").append(quote((String) vec.get("type")))
                .append(", \"values\": {");
            for (int k = 0; k < n.length; k++)
                sb.append(k > 0 ? ", " : "").append(quote(n[k])).append(": ")
                    .append(canon(t[k], c.getField(n[k]).get(rec)));
            sb.append("}}");
        }
        if (buf.hasRemaining())
            throw new IllegalStateException(in + ": " + buf.remaining() + " bytes after the last record");
        Files.writeString(Path.of(out), sb.append("]\n").toString(), StandardCharsets.UTF_8);
    }

    static boolean refused(Object rec) throws Exception {
        try {
            encode(rec);
            return false;
        } catch (IllegalArgumentException e) {
            return true;
        }
    }

    static void range(String pkg, String record) throws Exception {
        Class<?> c = cls(pkg, record);
        String[] n = names(c), t = types(c);
        int checked = 0;
        for (int k = 0; k < n.length; k++) {
            long hi = switch (t[k]) {
            case "uint8" -> 0xFFL;
            case "uint16" -> 0xFFFFL;
            case "uint32" -> 0xFFFFFFFFL;
            default -> -1;
            };
            if (hi < 0)
                continue;
            Field f = c.getField(n[k]);
            long[][] cases = {{0, 0}, {hi, 0}, {-1, 1}, {hi + 1, 1}};
            for (long[] cs : cases) {
                Object rec = c.getConstructor().newInstance();
                Object v = f.getType() == short.class ? (Object) (short) cs[0]
                    : f.getType() == int.class ? (Object) (int) cs[0] : (Object) cs[0];
                f.set(rec, v);
                if (refused(rec) != (cs[1] == 1))
                    throw new IllegalStateException(record + "." + n[k] + " = " + cs[0] + ": "
                                                    + (cs[1] == 1 ? "accepted" : "refused"));
                checked++;
            }
        }
        for (int k = 0; k < n.length; k++) {
            if (!t[k].equals("string") && !t[k].equals("bytes") && !t[k].equals("entity"))
                continue;
            Object rec = c.getConstructor().newInstance();
            c.getField(n[k]).set(rec, null);
            if (!refused(rec))
                throw new IllegalStateException(record + "." + n[k] + " = null: accepted");
            checked++;
        }
        if (checked == 0)
            throw new IllegalStateException(record + ": nothing to check");
        System.out.println("java: " + checked + " range checks");
    }

    static void malformed(String pkg, String record) throws Exception {
        Class<?> c = cls(pkg, record);
        byte[] whole = encode(c.getConstructor().newInstance());
        int checked = 0;
        // The length claims more bytes than there are; then every cut inside a field.
        for (int cut = 0; cut < whole.length; cut++) {
            byte[] b = java.util.Arrays.copyOf(whole, cut);
            try {
                decode(c, ByteBuffer.wrap(b));
                throw new IllegalStateException(record + " cut to " + cut + " bytes: accepted");
            } catch (IllegalArgumentException e) {
                checked++;
            }
        }
        System.out.println("java: " + checked + " malformed records refused");
    }

    public static void main(String[] a) throws Exception {
        switch (a[0]) {
        case "write" -> write(a[1], a[2], a[3]);
        case "read" -> read(a[1], a[2], a[3], a[4]);
        case "range" -> range(a[1], a[2]);
        case "malformed" -> malformed(a[1], a[2]);
        default -> throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }
}
