package dev.fencing.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.lang.reflect.Method;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLXML;
import java.util.Calendar;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The parameters a caller set on a prepared statement, recorded so that a statement that carries
 * the check ({@link CarriedCheck}) can set them again on the combined statement, at their index
 * plus the check's parameters. Mutable values (arrays, dates, calendars) are copied when recorded,
 * so a caller changing them afterwards changes what the driver's statement holds no more than what
 * is replayed. A stream, reader, {@code Blob}, {@code Clob} or {@code SQLXML}, which the driver
 * reads once, makes the parameters not {@link #replayable} until they are cleared.
 */
final class RecordedParameters {
  /** A setter call to replay: {@code setter} with {@code args} (the index first). */
  private record Param(Method setter, Object[] args) {}

  private final Map<Integer, Param> params = new HashMap<>();
  private boolean replayable = true;

  /** Records a call the driver's statement accepted, if it sets a parameter. */
  void called(Method method, Object @Nullable [] args) {
    if (args == null
        || args.length < 2
        || !(args[0] instanceof Integer index)
        || !method.getName().startsWith("set")
        || method.getParameterTypes()[0] != int.class) {
      return;
    }
    Object[] copy = args.clone();
    for (int i = 1; i < copy.length; i++) {
      Object a = copy[i];
      if (a instanceof InputStream
          || a instanceof Reader
          || a instanceof Blob
          || a instanceof Clob
          || a instanceof SQLXML) {
        replayable = false; // read once by the driver
      } else if (a instanceof byte[] bytes) {
        copy[i] = bytes.clone();
      } else if (a instanceof java.util.Date date) {
        copy[i] = date.clone();
      } else if (a instanceof Calendar calendar) {
        copy[i] = calendar.clone();
      } else if (a instanceof Object[] array) {
        copy[i] = array.clone();
      }
    }
    params.put(index, new Param(method, copy));
  }

  /** As the driver's {@code clearParameters}. */
  void clear() {
    params.clear();
    replayable = true;
  }

  /** Whether every recorded parameter can be set again. */
  boolean replayable() {
    return replayable;
  }

  /** Sets the recorded parameters on {@code c}, each {@code shift} places on. */
  void replay(PreparedStatement c, int shift) throws SQLException {
    for (Map.Entry<Integer, Param> p : params.entrySet()) {
      Object[] args = p.getValue().args().clone();
      args[0] = p.getKey() + shift;
      try {
        Delegation.invoke(c, p.getValue().setter(), args);
      } catch (SQLException | RuntimeException | Error e) {
        throw e;
      } catch (Throwable e) {
        throw new SQLException(e);
      }
    }
  }
}
