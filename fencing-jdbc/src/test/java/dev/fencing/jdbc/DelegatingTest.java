package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URL;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The plain delegating classes that replaced the JDK proxies of the connection, its statements and
 * its result sets hand every method of the JDBC interface (default methods too) to the driver's
 * object: the same method, the same arguments, its result returned as it is. A method left out, or
 * handed to another method or with its arguments mixed up, fails here; the fenced subclasses
 * override only the methods listed, each covered by the tests of what it fences. A prepared
 * statement's parameter setters also record the call for the carried check's replay: each replays
 * as the same setter with the same arguments.
 */
class DelegatingTest {
  @Test
  void everyConnectionMethodIsHandedToTheDriversConnection() throws Exception {
    assertEveryMethodForwarded(
        Connection.class, DelegatingConnection.class, raw -> new DelegatingConnection(raw) {});
  }

  @Test
  void everyResultSetMethodIsHandedToTheDriversResultSet() throws Exception {
    assertEveryMethodForwarded(
        ResultSet.class, DelegatingResultSet.class, raw -> new DelegatingResultSet(raw) {});
  }

  @Test
  void theFencedResultSetHandsOnEveryMethodItDoesNotFence() throws Exception {
    assertEveryMethodForwarded(
        ResultSet.class,
        DelegatingResultSet.class,
        raw -> new FencedResultSet(null, raw, null),
        FencedResultSet.class);
  }

  @Test
  void theFencedConnectionOverridesOnlyWhatItFences() {
    assertThat(overridden(FencedConnection.class, Connection.class))
        .containsExactlyInAnyOrder(
            "close()",
            "commit()",
            "createArrayOf(String,Object[])",
            "createStatement()",
            "createStatement(int,int)",
            "createStatement(int,int,int)",
            "getMetaData()",
            "isWrapperFor(Class)",
            "prepareCall(String)",
            "prepareCall(String,int,int)",
            "prepareCall(String,int,int,int)",
            "prepareStatement(String)",
            "prepareStatement(String,String[])",
            "prepareStatement(String,int)",
            "prepareStatement(String,int,int)",
            "prepareStatement(String,int,int,int)",
            "prepareStatement(String,int[])",
            "rollback()",
            "releaseSavepoint(Savepoint)",
            "rollback(Savepoint)",
            "setAutoCommit(boolean)",
            "setSavepoint()",
            "setSavepoint(String)",
            "unwrap(Class)");
  }

  @Test
  void theFencedResultSetOverridesOnlyWhatItFences() {
    assertThat(overridden(FencedResultSet.class, ResultSet.class))
        .containsExactlyInAnyOrder(
            "deleteRow()",
            "getArray(String)",
            "getArray(int)",
            "getObject(String)",
            "getObject(String,Class)",
            "getObject(String,Map)",
            "getObject(int)",
            "getObject(int,Class)",
            "getObject(int,Map)",
            "getStatement()",
            "insertRow()",
            "isWrapperFor(Class)",
            "unwrap(Class)",
            "updateRow()");
  }

  @Test
  void everyStatementMethodIsHandedToTheDriversStatement() throws Exception {
    assertEveryMethodForwarded(
        Statement.class,
        List.of(DelegatingStatement.class),
        raw -> new DelegatingStatement<Statement>(raw) {},
        50);
  }

  @Test
  void everyPreparedStatementMethodIsHandedToTheDriversStatement() throws Exception {
    assertEveryMethodForwarded(
        PreparedStatement.class,
        List.of(DelegatingStatement.class, DelegatingPreparedStatement.class),
        raw -> new DelegatingPreparedStatement<PreparedStatement>(raw) {},
        100);
  }

  @Test
  void everyCallableStatementMethodIsHandedToTheDriversStatement() throws Exception {
    assertEveryMethodForwarded(
        CallableStatement.class,
        List.of(
            DelegatingStatement.class,
            DelegatingPreparedStatement.class,
            DelegatingCallableOutput.class,
            DelegatingCallableStatement.class),
        raw -> new DelegatingCallableStatement(raw) {},
        220);
  }

  @Test
  void everyParameterSetterIsHandedOnAndRecordedThenHandedOnWithoutARecording() throws Exception {
    assertEveryMethodForwarded(
        PreparedStatement.class,
        List.of(
            DelegatingStatement.class,
            DelegatingPreparedStatement.class,
            RecordingPreparedStatement.class),
        raw -> new RecordingPreparedStatement(raw, null) {},
        100);
  }

  @Test
  void everyParameterSetterRecordedReplaysAsTheSameSetterWithTheSameArguments() throws Exception {
    List<String> failures = new ArrayList<>();
    int checked = 0;
    int[] counter = {0};
    for (Method m : methods(PreparedStatement.class)) {
      Class<?>[] types = m.getParameterTypes();
      if (!m.getName().startsWith("set") || types.length < 2 || types[0] != int.class) {
        continue;
      }
      List<Object[]> driverCalls = new ArrayList<>();
      PreparedStatement raw = recorder(PreparedStatement.class, driverCalls, counter);
      CarriedCheck carrier =
          Objects.requireNonNull(
              CarriedCheck.of(null, raw, PreparedStatement.class, new Object[] {"SELECT 1"}));
      RecordingPreparedStatement wrapper = new RecordingPreparedStatement(raw, carrier) {};
      Object[] args = new Object[types.length];
      for (int i = 0; i < types.length; i++) {
        args[i] = sample(types[i], ++counter[0]);
      }
      args[0] = 3; // a parameter's index
      implementation(wrapper.getClass(), m).invoke(wrapper, args);
      List<Object[]> replayed = new ArrayList<>();
      carrier.parameters().replay(recorder(PreparedStatement.class, replayed, counter), 0);
      checked++;
      if (replayed.size() != 1) {
        failures.add(signature(m) + ": " + replayed.size() + " setter calls replayed");
        continue;
      }
      Method again = (Method) replayed.get(0)[0];
      Object[] passed = (Object[]) replayed.get(0)[1];
      if (!again.getName().equals(m.getName())
          || !Arrays.equals(again.getParameterTypes(), m.getParameterTypes())) {
        failures.add(signature(m) + ": replayed as " + signature(again));
      } else if (!Arrays.deepEquals(args, passed)) {
        failures.add(signature(m) + ": replayed with other arguments");
      }
    }
    assertThat(failures).isEmpty();
    assertThat(checked).as("setters checked").isGreaterThan(40);
  }

  @Test
  void theFencedStatementHandsOnEveryMethodItDoesNotFence() throws Exception {
    assertEveryMethodForwarded(
        Statement.class,
        List.of(DelegatingStatement.class),
        raw -> new FencedStatement(null, raw),
        20,
        FencedStatement.class);
  }

  @Test
  void theFencedPreparedStatementHandsOnEveryMethodItDoesNotFence() throws Exception {
    assertEveryMethodForwarded(
        PreparedStatement.class,
        List.of(
            DelegatingStatement.class,
            DelegatingPreparedStatement.class,
            RecordingPreparedStatement.class),
        raw -> new FencedPreparedStatement(null, raw, null),
        70,
        FencedPreparedStatement.class);
  }

  @Test
  void theFencedCallableStatementHandsOnEveryMethodItDoesNotFence() throws Exception {
    assertEveryMethodForwarded(
        CallableStatement.class,
        List.of(
            DelegatingStatement.class,
            DelegatingPreparedStatement.class,
            DelegatingCallableOutput.class,
            DelegatingCallableStatement.class),
        raw -> new FencedCallableStatement(null, raw, null),
        180,
        FencedCallableStatement.class);
  }

  /** What every fenced statement overrides of {@code Statement} ({@link StatementFence}). */
  private static final List<String> STATEMENT_FENCED =
      List.of(
          "addBatch(String)",
          "cancel()",
          "clearBatch()",
          "clearWarnings()",
          "close()",
          "closeOnCompletion()",
          "execute(String)",
          "execute(String,String[])",
          "execute(String,int)",
          "execute(String,int[])",
          "executeBatch()",
          "executeLargeBatch()",
          "executeLargeUpdate(String)",
          "executeLargeUpdate(String,String[])",
          "executeLargeUpdate(String,int)",
          "executeLargeUpdate(String,int[])",
          "executeQuery(String)",
          "executeUpdate(String)",
          "executeUpdate(String,String[])",
          "executeUpdate(String,int)",
          "executeUpdate(String,int[])",
          "getConnection()",
          "getGeneratedKeys()",
          "getLargeUpdateCount()",
          "getMoreResults()",
          "getMoreResults(int)",
          "getResultSet()",
          "getUpdateCount()",
          "getWarnings()",
          "isWrapperFor(Class)",
          "unwrap(Class)");

  /** What the fenced prepared and callable statements override of {@code PreparedStatement}. */
  private static final List<String> PREPARED_FENCED =
      List.of(
          "addBatch()",
          "clearParameters()",
          "execute()",
          "executeLargeUpdate()",
          "executeQuery()",
          "executeUpdate()",
          "getMetaData()",
          "getParameterMetaData()");

  @Test
  void theFencedStatementsOverrideOnlyWhatTheyFence() {
    assertThat(overridden(FencedStatement.class, Statement.class))
        .containsExactlyInAnyOrderElementsOf(STATEMENT_FENCED);
    List<String> prepared = new ArrayList<>(STATEMENT_FENCED);
    prepared.addAll(PREPARED_FENCED);
    assertThat(overridden(FencedPreparedStatement.class, PreparedStatement.class))
        .containsExactlyInAnyOrderElementsOf(prepared);
    List<String> callable = new ArrayList<>(prepared);
    callable.addAll(
        List.of(
            "getArray(String)",
            "getArray(int)",
            "getObject(String)",
            "getObject(String,Class)",
            "getObject(String,Map)",
            "getObject(int)",
            "getObject(int,Class)",
            "getObject(int,Map)"));
    assertThat(overridden(FencedCallableStatement.class, CallableStatement.class))
        .containsExactlyInAnyOrderElementsOf(callable);
    // the setters of RecordingPreparedStatement: every parameter setter, nothing else
    List<String> setters = new ArrayList<>();
    for (Method m : methods(PreparedStatement.class)) {
      Class<?>[] types = m.getParameterTypes();
      if (m.getName().startsWith("set") && types.length >= 2 && types[0] == int.class) {
        setters.add(signature(m));
      }
    }
    assertThat(overridden(RecordingPreparedStatement.class, PreparedStatement.class))
        .containsExactlyInAnyOrderElementsOf(setters);
  }

  /** The methods of {@code iface} that {@code fenced} itself declares. */
  private static Set<String> overridden(Class<?> fenced, Class<?> iface) {
    Set<String> names = new TreeSet<>();
    for (Method m : methods(iface)) {
      if (implementation(fenced, m).getDeclaringClass() == fenced) {
        names.add(signature(m));
      }
    }
    return names;
  }

  private static <T> void assertEveryMethodForwarded(
      Class<T> iface, Class<?> base, Function<T, ?> wrap, Class<?>... skipOverridesOf)
      throws Exception {
    assertEveryMethodForwarded(
        iface, List.of(base), wrap, skipOverridesOf.length > 0 ? 150 : 50, skipOverridesOf);
  }

  /**
   * Every method of {@code iface} not declared by {@code skipOverridesOf} is written out in one of
   * {@code bases} and hands the call on to the driver's object unchanged; more than {@code atLeast}
   * methods checked.
   */
  private static <T> void assertEveryMethodForwarded(
      Class<T> iface,
      List<Class<?>> bases,
      Function<T, ?> wrap,
      int atLeast,
      Class<?>... skipOverridesOf)
      throws Exception {
    List<String> failures = new ArrayList<>();
    int[] counter = {0};
    List<Object[]> calls = new ArrayList<>(); // {method, args, result}
    T raw = recorder(iface, calls, counter);
    Object wrapper = wrap.apply(raw);
    int checked = 0;
    for (Method m : methods(iface)) {
      Method impl = implementation(wrapper.getClass(), m);
      if (Arrays.asList(skipOverridesOf).contains(impl.getDeclaringClass())) {
        continue;
      }
      if (!bases.contains(impl.getDeclaringClass())) {
        failures.add(signature(m) + ": not written out in " + bases);
        continue;
      }
      Class<?>[] types = m.getParameterTypes();
      Object[] args = new Object[types.length];
      for (int i = 0; i < types.length; i++) {
        args[i] = sample(types[i], ++counter[0]);
      }
      calls.clear();
      Object result;
      try {
        impl.setAccessible(true);
        result = impl.invoke(wrapper, args);
      } catch (InvocationTargetException e) {
        failures.add(signature(m) + ": threw " + e.getCause());
        continue;
      }
      checked++;
      if (calls.size() != 1) {
        failures.add(signature(m) + ": " + calls.size() + " calls to the driver's object");
        continue;
      }
      Method called = (Method) calls.get(0)[0];
      Object[] passed = (Object[]) calls.get(0)[1];
      if (!called.getName().equals(m.getName())
          || !Arrays.equals(called.getParameterTypes(), m.getParameterTypes())) {
        failures.add(signature(m) + ": handed to " + signature(called));
        continue;
      }
      for (int i = 0; i < types.length; i++) {
        boolean same = types[i].isPrimitive() ? args[i].equals(passed[i]) : args[i] == passed[i];
        if (!same) {
          failures.add(signature(m) + ": argument " + (i + 1) + " not passed on as it is");
        }
      }
      Object expected = calls.get(0)[2];
      boolean sameResult =
          m.getReturnType() == void.class
              || (m.getReturnType().isPrimitive() ? expected.equals(result) : expected == result);
      if (!sameResult) {
        failures.add(signature(m) + ": returned " + result + ", the driver's object " + expected);
      }
    }
    assertThat(failures).isEmpty();
    assertThat(checked).as("methods checked").isGreaterThan(atLeast);
  }

  /**
   * A driver's object of {@code iface} that answers every call (but identity's) with a sample value
   * and keeps it as {method, args, result} in {@code calls}.
   */
  private static <T> T recorder(Class<T> iface, List<Object[]> calls, int[] counter) {
    return iface.cast(
        Proxy.newProxyInstance(
            iface.getClassLoader(),
            new Class<?>[] {iface},
            (self, method, args) -> {
              switch (method.getName()) {
                case "hashCode":
                  if (method.getParameterCount() == 0) {
                    return System.identityHashCode(self);
                  }
                  break;
                case "equals":
                  if (method.getParameterCount() == 1
                      && method.getParameterTypes()[0] == Object.class) {
                    return self == args[0];
                  }
                  break;
                case "toString":
                  if (method.getParameterCount() == 0) {
                    return "raw";
                  }
                  break;
                default:
                  break;
              }
              Object result = sample(method.getReturnType(), ++counter[0]);
              calls.add(new Object[] {method, args == null ? new Object[0] : args, result});
              return result;
            }));
  }

  /**
   * The method of {@code type} that implements {@code m}: the nearest declared one that is not a
   * bridge (javac gives a public class a bridge for each public method inherited from its
   * package-private base, so that reflection through the public class can call it); else {@code m}.
   */
  private static Method implementation(Class<?> type, Method m) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        Method declared = c.getDeclaredMethod(m.getName(), m.getParameterTypes());
        if (!declared.isBridge()) {
          return declared;
        }
      } catch (NoSuchMethodException e) {
        // declared further up
      }
    }
    return m; // the interface's (a default method, or none)
  }

  /** Every instance method of {@code iface} (inherited and default ones too), once. */
  private static List<Method> methods(Class<?> iface) {
    Map<String, Method> methods = new java.util.TreeMap<>();
    for (Method m : iface.getMethods()) {
      if (!Modifier.isStatic(m.getModifiers())) {
        methods.putIfAbsent(signature(m), m);
      }
    }
    return new ArrayList<>(methods.values());
  }

  private static String signature(Method m) {
    StringBuilder b = new StringBuilder(m.getName()).append('(');
    Class<?>[] types = m.getParameterTypes();
    for (int i = 0; i < types.length; i++) {
      b.append(i > 0 ? "," : "").append(types[i].getSimpleName());
    }
    return b.append(')').toString();
  }

  /**
   * A value of {@code type} told apart from every other by {@code n}: equal, or the same object.
   */
  private static @Nullable Object sample(Class<?> type, int n) throws Exception {
    if (type == void.class) {
      return null;
    }
    if (type == boolean.class || type == Boolean.class) {
      return n % 2 == 0;
    }
    if (type == int.class || type == Integer.class) {
      return n;
    }
    if (type == long.class || type == Long.class) {
      return 1_000_000L + n;
    }
    if (type == short.class || type == Short.class) {
      return (short) n;
    }
    if (type == byte.class || type == Byte.class) {
      return (byte) n;
    }
    if (type == float.class || type == Float.class) {
      return n + 0.5f;
    }
    if (type == double.class || type == Double.class) {
      return n + 0.25;
    }
    if (type == String.class) {
      return new String("s" + n);
    }
    if (type == Object.class) {
      return new Object();
    }
    if (type == Class.class) {
      return new Class<?>[] {String.class, Integer.class, Long.class, Object.class}[n % 4];
    }
    if (type.isArray()) {
      return java.lang.reflect.Array.newInstance(type.getComponentType(), n % 5 + 1);
    }
    if (type == Map.class) {
      Map<String, Class<?>> map = new HashMap<>();
      map.put("t" + n, String.class);
      return map;
    }
    if (type == java.sql.SQLWarning.class) {
      return new java.sql.SQLWarning("w" + n);
    }
    if (type == Properties.class) {
      return new Properties();
    }
    if (type == Calendar.class) {
      return Calendar.getInstance();
    }
    if (type == BigDecimal.class) {
      return BigDecimal.valueOf(n);
    }
    if (type == java.sql.Date.class) {
      return new java.sql.Date(n);
    }
    if (type == java.sql.Time.class) {
      return new java.sql.Time(n);
    }
    if (type == java.sql.Timestamp.class) {
      return new java.sql.Timestamp(n);
    }
    if (type == InputStream.class) {
      return new ByteArrayInputStream(new byte[n % 5]);
    }
    if (type == Reader.class) {
      return new StringReader("s" + n);
    }
    if (type == URL.class) {
      return new URI("http://h/" + n).toURL();
    }
    if (type.isInterface()) {
      return Proxy.newProxyInstance(
          type.getClassLoader() == null
              ? DelegatingTest.class.getClassLoader()
              : type.getClassLoader(),
          new Class<?>[] {type},
          (self, method, args) -> method.getName().equals("hashCode") ? 0 : null);
    }
    throw new AssertionError("no sample value of " + type);
  }
}
