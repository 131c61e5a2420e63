// The hand-built model's Java classes (handmodel.c): prints the encoding of a default
// Child, then "ok" if decoding the golden encoding (argv[0]) as Child and as Base gives
// the expected values; otherwise what differs.
import java.nio.ByteBuffer;
import vigil.hand.Base;
import vigil.hand.Child;
import vigil.hand.EntityRef;

public class HandCheck {
    public static void main(String[] a) {
        byte[] e = new Child().encode();
        StringBuilder sb = new StringBuilder();
        for (byte x : e)
            sb.append(String.format("%02x", x & 0xFF));
        System.out.println(sb);
        byte[] golden = new byte[a[0].length() / 2];
        for (int k = 0; k < golden.length; k++)
            golden[k] = (byte) Integer.parseInt(a[0].substring(2 * k, 2 * k + 2), 16);
        ByteBuffer buf = ByteBuffer.wrap(golden);
        Child c = Child.decode(buf);
        Base b = Base.decode(ByteBuffer.wrap(golden));
        String bad = "";
        if (buf.hasRemaining()) bad += " child-not-consumed";
        if (c.a != -128 || c.big != -1L || Double.doubleToRawLongBits(c.f) != Long.MIN_VALUE)
            bad += " child-numbers";
        if (!c.s.equals("h\u00e9\n") || c.b.length != 3 || c.b[1] != (byte) 0xFF) bad += " child-text";
        if (!c.p.equals(EntityRef.NONE) || !c.flag || c.inf != Double.NEGATIVE_INFINITY) bad += " child-misc";
        if (c.class_ != 7L || c.encode != 65535 || c.int_ != 255 || c.conn_fd != 0 || !c.conn_peer.isEmpty())
            bad += " child-own";
        if (!b.s.equals(c.s) || b.big != -1L || !(b instanceof Base) || !(c instanceof Base)) bad += " base";
        System.out.println(bad.isEmpty() ? "ok" : bad);
    }
}
