package dev.fencing.testing;

import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Counts the round trips of the thread that creates it, as pgjdbc logs its messages at FINEST: each
 * time it reads from the server after sending, it waited once. Other threads' messages (a pool's
 * housekeeping, a lease's renewal) are not counted. (Syncs alone would not do: with {@code
 * preferQueryMode=simple} pgjdbc sends each statement of a multi-statement query as a query message
 * of its own, all before reading.) Also keeps the messages sent, formatted. Test code only; {@link
 * #close()} restores the logger.
 */
public final class RoundTrips implements AutoCloseable {
  private static final Logger PGJDBC = Logger.getLogger("org.postgresql.core.v3.QueryExecutorImpl");

  private final Thread owner = Thread.currentThread();
  private final List<String> sent = new ArrayList<>();
  private int waits; // guarded by sent
  private boolean sending; // guarded by sent
  private final Level previousLevel;
  private final boolean previousParents;
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          String message = record.getMessage();
          if (message == null || Thread.currentThread() != owner) {
            return;
          }
          if (message.startsWith(" <=BE")) {
            synchronized (sent) {
              if (sending) {
                waits++;
                sending = false;
              }
            }
          } else if (message.startsWith(" FE=> ")) {
            String formatted =
                record.getParameters() == null
                    ? message
                    : MessageFormat.format(message, record.getParameters());
            synchronized (sent) {
              sent.add(formatted);
              sending = true;
            }
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  public RoundTrips() {
    previousLevel = PGJDBC.getLevel();
    previousParents = PGJDBC.getUseParentHandlers();
    PGJDBC.setUseParentHandlers(false); // quiet: the records only go to the counter
    PGJDBC.setLevel(Level.FINEST);
    PGJDBC.addHandler(handler);
  }

  /** Forgets what was sent so far. */
  public void reset() {
    synchronized (sent) {
      sent.clear();
      waits = 0;
      sending = false;
    }
  }

  /** Round trips since the last reset: how often pgjdbc read from the server after sending. */
  public int count() {
    synchronized (sent) {
      return waits;
    }
  }

  /** The messages sent since the last reset, formatted. */
  public List<String> sent() {
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
