package dev.fencing.jdbc;

import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Counts round trips as pgjdbc logs them at FINEST (as {@link LeaseRoundTripTest} does): the
 * extended protocol ends each with a Sync, the simple protocol sends each as one query message
 * (pgjdbc's own BEGIN and autosave SAVEPOINT go in front of the next one, without a wait). Also
 * keeps the messages sent, formatted. Test code only; {@link #close()} restores the logger.
 */
final class RoundTrips implements AutoCloseable {
  private static final Logger PGJDBC = Logger.getLogger("org.postgresql.core.v3.QueryExecutorImpl");

  private final List<String> sent = new ArrayList<>();
  private final Level previousLevel;
  private final boolean previousParents;
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          String message = record.getMessage();
          if (message != null && message.startsWith(" FE=> ")) {
            String formatted =
                record.getParameters() == null
                    ? message
                    : MessageFormat.format(message, record.getParameters());
            synchronized (sent) {
              sent.add(formatted);
            }
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  RoundTrips() {
    previousLevel = PGJDBC.getLevel();
    previousParents = PGJDBC.getUseParentHandlers();
    PGJDBC.setUseParentHandlers(false); // quiet: the records only go to the counter
    PGJDBC.setLevel(Level.FINEST);
    PGJDBC.addHandler(handler);
  }

  /** Forgets what was sent so far. */
  void reset() {
    synchronized (sent) {
      sent.clear();
    }
  }

  /** Round trips since the last reset: Sync messages and simple queries. */
  int count() {
    synchronized (sent) {
      return (int) sent.stream().filter(m -> m.equals(" FE=> Sync") || ownQuery(m)).count();
    }
  }

  /**
   * A simple query the caller waits for; not pgjdbc's own BEGIN and autosave SAVEPOINT, which it
   * sends in front of the next query without waiting.
   */
  private static boolean ownQuery(String m) {
    return m.startsWith(" FE=> SimpleQuery")
        && !m.contains("query=\"BEGIN\"")
        && !m.contains("query=\"SAVEPOINT PGJDBC_AUTOSAVE\"");
  }

  /** The messages sent since the last reset, formatted. */
  List<String> sent() {
    synchronized (sent) {
      return List.copyOf(sent);
    }
  }

  @Override
  public void close() {
    PGJDBC.removeHandler(handler);
    PGJDBC.setLevel(previousLevel);
    PGJDBC.setUseParentHandlers(previousParents);
  }
}
