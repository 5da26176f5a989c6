package dev.fencing.jdbc;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.BaseStatement;
import org.postgresql.core.CachedQuery;
import org.postgresql.core.ParameterList;
import org.postgresql.core.Query;
import org.postgresql.core.v3.SqlSerializationContext;
import org.postgresql.jdbc.PreferQueryMode;

/**
 * A {@code PreparedStatement}'s execution in autocommit under {@code preferQueryMode=simple}, with
 * the check in its round trip (issue 13). pgjdbc sends each statement of a prepared multi-statement
 * query as a query message of its own (each its own implicit transaction), so the combined
 * statement of {@link CarriedCheck} cannot carry there. Instead the caller's statement is rendered
 * as pgjdbc sends it under {@code simple} ({@code Query.toString(parameters,
 * SqlSerializationContext.of(standard_conforming_strings, false))}, the call of {@code
 * QueryExecutorImpl.sendSimpleQuery}, on the driver's own query and parameters) and run as a plain
 * {@code Statement}'s carried execution ({@link CarriedStatement}: {@code <check>;<text>}, or the
 * read with the check behind it, {@link CheckedRead}): one query message, one implicit transaction,
 * the text the server sees the driver's own behind the check. The plain statement (escape
 * processing off, the caller's settings) then holds the results the caller sees.
 *
 * <p>Nothing is sent (the execution runs the long way) where the driver's query and parameters are
 * not at hand, a parameter is a stream, reader or LOB ({@link CarriedCheck#replayable}: the render
 * would read it), a parameter is unset (the driver's own error then), the driver's query is several
 * statements, or the rendered text holds a {@code ;} (a parameter's value, say) before its end.
 */
final class CarriedSimple {
  private static final @Nullable Field QUERY = field("preparedQuery");
  private static final @Nullable Field PARAMETERS = field("preparedParameters");
  private static final @Nullable Method ALL_SET = allSetMethod();

  private final Connection connection;
  private final CarriedCheck owner;
  private final PreparedStatement raw;
  private @Nullable Statement plain;
  // the driver's connection behind connection (null: none), unwrapped once: the statement's
  // physical connection does not change while it is open, and the carrier closes with it
  private @Nullable BaseConnection driver;
  private boolean unwrapped;

  CarriedSimple(Connection connection, CarriedCheck owner, PreparedStatement raw) {
    this.connection = connection;
    this.owner = owner;
    this.raw = raw;
  }

  /** Whether the driver's query and parameters can be read at all. */
  static boolean available() {
    return QUERY != null && PARAMETERS != null && ALL_SET != null;
  }

  /**
   * Whether this execution runs in autocommit under {@code preferQueryMode=simple}: carried here,
   * on the plain statement as one query message.
   */
  boolean inAutocommit() throws SQLException {
    if (!connection.getAutoCommit()) {
      return false;
    }
    BaseConnection d = driver();
    return d != null && d.getPreferQueryMode() == PreferQueryMode.SIMPLE;
  }

  private @Nullable BaseConnection driver() throws SQLException {
    if (!unwrapped) {
      driver =
          connection.isWrapperFor(BaseConnection.class)
              ? connection.unwrap(BaseConnection.class)
              : null;
      unwrapped = true;
    }
    return driver;
  }

  /** Runs {@code name} with {@code check} in front of it on the plain statement; null if unsent. */
  Carrier.@Nullable Carried run(String name, CheckArguments check) throws SQLException {
    Carrier carrier = onPlain(carrier(name));
    return carrier == null ? null : sent(carrier.call(check));
  }

  /** Runs the read {@code name} with {@code check} behind it on the plain statement, or null. */
  Carrier.@Nullable Carried runRead(String name, String check) throws SQLException {
    Carrier carrier = onPlain(carrier(name));
    return carrier == null ? null : sent(carrier.callRead(check));
  }

  /**
   * The plain statement executes now, if {@code carrier} is its carrier: the earlier results
   * closed, as at the driver's next execution.
   */
  private @Nullable Carrier onPlain(@Nullable Carrier carrier) throws SQLException {
    Statement s = plain;
    if (carrier != null && s != null) {
      owner.switchTo(s);
    }
    return carrier;
  }

  /** What the plain statement's execution returned; if nothing was sent, the driver's again. */
  private Carrier.@Nullable Carried sent(Carrier.@Nullable Carried carried) throws SQLException {
    Statement s = plain;
    if (carried == null && s != null) {
      owner.leave(s);
    }
    return carried;
  }

  /**
   * The carrier of {@code name} on the plain statement, for the caller's statement rendered as
   * pgjdbc would send it; null if it cannot be (nothing sent).
   */
  private @Nullable Carrier carrier(String name) throws SQLException {
    String text = rendered();
    if (text == null) {
      return null;
    }
    return CarriedStatement.of(statement(), name, new Object[] {text});
  }

  /** The plain statement that sends it, with the caller's settings (its fetch size too). */
  private Statement statement() throws SQLException {
    Statement s = plain;
    if (s == null) {
      s = connection.createStatement();
      s.setEscapeProcessing(false); // the text is the driver's, escapes already replaced
      plain = s;
    }
    s.setMaxRows(raw.getMaxRows());
    s.setQueryTimeout(raw.getQueryTimeout());
    s.setMaxFieldSize(raw.getMaxFieldSize());
    s.setFetchDirection(raw.getFetchDirection());
    // 0 here (CarriedCheck carries no fetch size): not the connection's defaultRowFetchSize, which
    // would make CarriedStatement decline; the driver's statement fetches all rows at once too
    s.setFetchSize(raw.getFetchSize());
    return s;
  }

  /** The plain statement, if one was made (closed with the caller's). */
  @Nullable Statement made() {
    return plain;
  }

  private @Nullable String rendered() throws SQLException {
    Field q = QUERY;
    Field p = PARAMETERS;
    BaseConnection driver = driver();
    // the render reads a stream parameter: a fallback after it would send the emptied stream
    if (!owner.replayable()
        || q == null
        || p == null
        || driver == null
        || !raw.isWrapperFor(BaseStatement.class)) {
      return null;
    }
    Object pg = raw.unwrap(BaseStatement.class);
    if (!q.getDeclaringClass().isInstance(pg)) {
      return null;
    }
    Query query;
    ParameterList parameters;
    try {
      query = ((CachedQuery) q.get(pg)).query;
      parameters = (ParameterList) p.get(pg);
    } catch (IllegalAccessException | RuntimeException e) {
      return null;
    }
    if (query.getSubqueries() != null || !allSet(parameters)) {
      return null;
    }
    String text =
        query.toString(
            parameters, SqlSerializationContext.of(driver.getStandardConformingStrings(), false));
    return CarriedCheck.oneStatement(text) ? text : null;
  }

  /** The driver's own test before it sends anything ({@code checkAllParametersSet}). */
  private static boolean allSet(ParameterList parameters) {
    Method check = ALL_SET;
    if (check == null || !check.getDeclaringClass().isInstance(parameters)) {
      return false;
    }
    try {
      check.invoke(parameters);
      return true;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false; // a parameter unset (or unreadable): the driver's own execution reports it
    }
  }

  /** {@code V3ParameterList.checkAllParametersSet} (a package-private interface of pgjdbc). */
  private static @Nullable Method allSetMethod() {
    try {
      Method m =
          Class.forName("org.postgresql.core.v3.V3ParameterList")
              .getMethod("checkAllParametersSet");
      m.setAccessible(true);
      return m;
    } catch (ClassNotFoundException | NoSuchMethodException | LinkageError | RuntimeException e) {
      return null;
    }
  }

  private static @Nullable Field field(String name) {
    try {
      Field f = Class.forName("org.postgresql.jdbc.PgPreparedStatement").getDeclaredField(name);
      f.setAccessible(true);
      return f;
    } catch (ClassNotFoundException | NoSuchFieldException | LinkageError | RuntimeException e) {
      return null;
    }
  }
}
