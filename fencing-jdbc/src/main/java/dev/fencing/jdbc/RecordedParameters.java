package dev.fencing.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.lang.reflect.Method;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLXML;
import java.util.Arrays;
import java.util.Calendar;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
  // PostgreSQL's limit on a statement's parameters
  private static final int MAX_INDEX = 65535;

  // whether a method's first parameter is an int: getParameterTypes() copies its array per call
  private static final Map<Method, Boolean> INT_FIRST = new ConcurrentHashMap<>();

  /** A setter call to replay: {@code setter} with {@code args} (the index first). */
  private record Param(Method setter, Object[] args) {}

  // by parameter index (1-based; 0 unused), grown as needed: no boxing, no map entry per setter
  private Param @Nullable [] params;
  private int count;
  private boolean replayable = true;

  /** Records a call the driver's statement accepted, if it sets a parameter. */
  void called(Method method, Object @Nullable [] args) {
    if (args == null
        || args.length < 2
        || !(args[0] instanceof Integer index)
        || !method.getName().startsWith("set")
        || !INT_FIRST.computeIfAbsent(method, m -> m.getParameterTypes()[0] == int.class)) {
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
    put(index, new Param(method, copy));
  }

  private void put(int index, Param p) {
    if (index < 0 || index > MAX_INDEX) {
      replayable = false; // no such parameter in PostgreSQL (the driver accepted it anyway)
      return;
    }
    Param[] all = params;
    if (all == null || index >= all.length) {
      Param[] grown = new Param[Math.max(index + 1, all == null ? 8 : 2 * all.length)];
      if (all != null) {
        System.arraycopy(all, 0, grown, 0, all.length);
      }
      params = all = grown;
    }
    if (all[index] == null) {
      count++;
    }
    all[index] = p;
  }

  /** As the driver's {@code clearParameters}. */
  void clear() {
    if (count > 0) {
      Arrays.fill(params, null);
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
    Param[] all = params;
    if (all == null) {
      return;
    }
    for (int index = 0; index < all.length; index++) {
      Param p = all[index];
      if (p == null) {
        continue;
      }
      Object[] args = p.args().clone();
      args[0] = index + shift;
      try {
        Delegation.invoke(c, p.setter(), args);
      } catch (SQLException | RuntimeException | Error e) {
        throw e;
      } catch (Throwable e) {
        throw new SQLException(e);
      }
    }
  }
}
