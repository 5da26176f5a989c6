package dev.fencing.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLXML;
import java.util.Arrays;
import java.util.Calendar;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.postgresql.util.PGobject;

/**
 * The parameters a caller set on a prepared statement, recorded so that a statement that carries
 * the check ({@link CarriedCheck}) can set them again on the combined statement, at their index
 * plus the check's parameters. Mutable values (arrays, deeply, of any element type; dates,
 * calendars, {@code PGobject}s, maps) are copied when recorded, so a caller changing them
 * afterwards changes what the driver's statement holds no more than what is replayed. A stream,
 * reader, {@code Blob}, {@code Clob} or {@code SQLXML}, which the driver reads once, or a value
 * that cannot be copied (a mutable {@code Number}), makes the parameters not {@link #replayable}
 * until they are cleared.
 */
final class RecordedParameters {
  // PostgreSQL's limit on a statement's parameters
  private static final int MAX_INDEX = 65535;
  // the slots first made: parameters 1 to 5 (a typical statement's) without growing
  private static final int INITIAL_SLOTS = 12;

  // how a method is replayed, NONE if its first parameter is not an int (not a parameter's
  // setter): getParameterTypes() copies its array per call, so it is asked once per method
  private static final Map<Method, Setter> SETTERS = new ConcurrentHashMap<>();

  /**
   * The setters applications (and Hibernate) call most, recorded ({@link #setInt} and the like: the
   * kind and the value, no argument array) and replayed by a direct call of the same {@code
   * PreparedStatement} method with the same arguments: no argument array copied, no {@code
   * Method.invoke}. Any other setter goes through reflection ({@link #REFLECTIVE}).
   */
  private enum Setter {
    NONE,
    REFLECTIVE,
    INT,
    LONG,
    STRING,
    OBJECT,
    NULL;

    static Setter of(Method m) {
      Class<?>[] types = m.getParameterTypes();
      if (types.length == 0 || types[0] != int.class) {
        return NONE;
      }
      if (types.length != 2 || m.getDeclaringClass() != PreparedStatement.class) {
        return REFLECTIVE;
      }
      Class<?> type = types[1];
      return switch (m.getName()) {
        case "setInt" -> type == int.class ? INT : REFLECTIVE;
        case "setLong" -> type == long.class ? LONG : REFLECTIVE;
        case "setString" -> type == String.class ? STRING : REFLECTIVE;
        case "setObject" -> type == Object.class ? OBJECT : REFLECTIVE;
        case "setNull" -> type == int.class ? NULL : REFLECTIVE;
        default -> REFLECTIVE;
      };
    }
  }

  // by parameter index (1-based; 0 unused), two slots each, grown as needed: at 2 * index the
  // setter, at 2 * index + 1 what it was called with. For the setters called most (a Setter kind)
  // the value itself; for any other (a Method) its arguments, the index first, the caller's array
  // kept as it is unless an element must be copied, the replay looking the setter's kind up again
  // (SETTERS) when it happens. No object per setter call but the boxed value, no map entry.
  private @Nullable Object @Nullable [] calls;
  private int count;
  private boolean replayable = true;

  /**
   * Records a call the driver's statement accepted, if it sets a parameter. {@code args} is an
   * array made for this call (held by no one after it): kept as it is unless an element must be
   * copied.
   */
  void called(Method method, Object @Nullable [] args) {
    if (args == null
        || args.length < 2
        || !(args[0] instanceof Integer index)
        || !method.getName().startsWith("set")) {
      return;
    }
    Setter setter = SETTERS.computeIfAbsent(method, Setter::of);
    if (setter == Setter.NONE) {
      return;
    }
    Object[] kept = args;
    for (int i = 1; i < kept.length; i++) {
      Object a = kept[i];
      Object copy = snapshot(a);
      if (copy == UNREPLAYABLE) {
        replayable = false; // read once by the driver, or its value as set cannot be kept
        continue;
      }
      if (copy != a) {
        if (kept == args) {
          kept = args.clone();
        }
        kept[i] = copy;
      }
    }
    put(index, method, kept);
  }

  /** Records {@code setInt(index, value)}, which the driver's statement accepted. */
  void setInt(int index, int value) {
    put(index, Setter.INT, value);
  }

  /** Records {@code setLong(index, value)}, which the driver's statement accepted. */
  void setLong(int index, long value) {
    put(index, Setter.LONG, value);
  }

  /** Records {@code setString(index, value)}, which the driver's statement accepted. */
  void setString(int index, @Nullable String value) {
    put(index, Setter.STRING, value);
  }

  /** Records {@code setNull(index, sqlType)}, which the driver's statement accepted. */
  void setNull(int index, int sqlType) {
    put(index, Setter.NULL, sqlType);
  }

  /** Records {@code setObject(index, value)}, which the driver's statement accepted. */
  void setObject(int index, @Nullable Object value) {
    Object copy = snapshot(value);
    if (copy == UNREPLAYABLE) {
      replayable = false; // read once by the driver, or its value as set cannot be kept
      copy = value;
    }
    put(index, Setter.OBJECT, copy);
  }

  // what snapshot returns for a value it cannot keep as it is now
  private static final Object UNREPLAYABLE = new Object();

  /**
   * {@code a} as it is now, for a later replay: pgjdbc encodes a setter's argument when it is
   * called, so a caller changing a mutable argument afterwards changes nothing the driver sends.
   * The argument itself if immutable, else a copy (arrays deeply, dates, calendars, {@code
   * PGobject}s, maps), or {@link #UNREPLAYABLE}: a stream, reader or LOB (read once by the driver),
   * or a value that cannot be copied (a mutable {@code Number} such as an {@code AtomicLong}).
   */
  private static @Nullable Object snapshot(@Nullable Object a) {
    if (a == null
        || a instanceof String
        || a instanceof Integer
        || a instanceof Long
        || a instanceof Boolean) {
      return a; // the common cases first
    }
    if (a instanceof InputStream
        || a instanceof Reader
        || a instanceof Blob
        || a instanceof Clob
        || a instanceof SQLXML) {
      return UNREPLAYABLE;
    }
    if (a instanceof Object[] array) {
      Object[] copy = array.clone();
      for (int i = 0; i < copy.length; i++) {
        Object e = snapshot(copy[i]);
        if (e == UNREPLAYABLE) {
          return UNREPLAYABLE;
        }
        copy[i] = e;
      }
      return copy;
    }
    if (a.getClass().isArray()) {
      return primitiveCopy(a);
    }
    if (a instanceof java.util.Date date) {
      return date.clone();
    }
    if (a instanceof Calendar calendar) {
      return calendar.clone();
    }
    if (a instanceof PGobject object) {
      try {
        return object.clone();
      } catch (CloneNotSupportedException | RuntimeException e) {
        return UNREPLAYABLE;
      }
    }
    if (a instanceof Map<?, ?> map) {
      // pgjdbc renders a map (hstore) in its iteration order when set
      Map<Object, @Nullable Object> copy = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        Object v = snapshot(e.getValue());
        if (v == UNREPLAYABLE) {
          return UNREPLAYABLE;
        }
        copy.put(e.getKey(), v);
      }
      return copy;
    }
    if (a instanceof Number n && !immutableNumber(n)) {
      return UNREPLAYABLE; // AtomicLong, LongAdder, ...: rendered by the driver when set
    }
    return a;
  }

  private static boolean immutableNumber(Number n) {
    Class<?> type = n.getClass();
    return type == Short.class
        || type == Byte.class
        || type == Double.class
        || type == Float.class
        || type == BigDecimal.class
        || type == BigInteger.class;
  }

  private static Object primitiveCopy(Object array) {
    if (array instanceof byte[] a) {
      return a.clone();
    } else if (array instanceof int[] a) {
      return a.clone();
    } else if (array instanceof long[] a) {
      return a.clone();
    } else if (array instanceof short[] a) {
      return a.clone();
    } else if (array instanceof double[] a) {
      return a.clone();
    } else if (array instanceof float[] a) {
      return a.clone();
    } else if (array instanceof boolean[] a) {
      return a.clone();
    } else if (array instanceof char[] a) {
      return a.clone();
    }
    return UNREPLAYABLE;
  }

  /**
   * Keeps {@code setter} (a {@link Setter} or a {@link Method}) and {@code value} at {@code index}.
   */
  private void put(int index, Object setter, @Nullable Object value) {
    if (index < 0 || index > MAX_INDEX) {
      replayable = false; // no such parameter in PostgreSQL (the driver accepted it anyway)
      return;
    }
    int slot = 2 * index;
    @Nullable Object[] all = calls;
    if (all == null || slot + 1 >= all.length) {
      @Nullable Object[] grown =
          new Object[Math.max(slot + 2, all == null ? INITIAL_SLOTS : 2 * all.length)];
      if (all != null) {
        System.arraycopy(all, 0, grown, 0, all.length);
      }
      calls = all = grown;
    }
    if (all[slot] == null) {
      count++;
    }
    all[slot] = setter;
    all[slot + 1] = value;
  }

  /** As the driver's {@code clearParameters}. */
  void clear() {
    @Nullable Object[] all = calls;
    if (count > 0 && all != null) {
      Arrays.fill(all, null);
      count = 0;
    }
    replayable = true;
  }

  /** Whether every recorded parameter can be set again. */
  boolean replayable() {
    return replayable;
  }

  /** Sets the recorded parameters on {@code c}, each {@code shift} places on. */
  void replay(PreparedStatement c, int shift) throws SQLException {
    @Nullable Object[] all = calls;
    if (all == null) {
      return;
    }
    for (int slot = 0; slot + 1 < all.length; slot += 2) {
      int at = slot / 2 + shift;
      if (all[slot] instanceof Setter kind) {
        Object value = all[slot + 1];
        switch (kind) {
          case INT -> c.setInt(at, (Integer) value);
          case LONG -> c.setLong(at, (Long) value);
          case STRING -> c.setString(at, (String) value);
          case OBJECT -> c.setObject(at, value);
          case NULL -> c.setNull(at, (Integer) value);
          case REFLECTIVE, NONE -> {} // never kept as a kind
        }
        continue;
      }
      if (!(all[slot] instanceof Method setter) || !(all[slot + 1] instanceof Object[] recorded)) {
        continue;
      }
      switch (SETTERS.computeIfAbsent(setter, Setter::of)) {
        case INT -> c.setInt(at, (Integer) recorded[1]);
        case LONG -> c.setLong(at, (Long) recorded[1]);
        case STRING -> c.setString(at, (String) recorded[1]);
        case OBJECT -> c.setObject(at, recorded[1]);
        case NULL -> c.setNull(at, (Integer) recorded[1]);
        case REFLECTIVE -> reflectively(c, setter, recorded, at);
        case NONE -> {} // never recorded
      }
    }
  }

  private static void reflectively(PreparedStatement c, Method setter, Object[] recorded, int at)
      throws SQLException {
    Object[] args = recorded.clone();
    args[0] = at;
    try {
      Delegation.invoke(c, setter, args);
    } catch (SQLException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new SQLException(e);
    }
  }
}
