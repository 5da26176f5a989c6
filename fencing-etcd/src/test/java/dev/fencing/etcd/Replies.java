package dev.fencing.etcd;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * gRPC interceptors for the etcd tests' clients that look at, hold back or act on etcd's replies:
 * the faults and clocks of the tests, without sleeps.
 */
final class Replies {
  private Replies() {}

  /** What a test does with the replies of one call. */
  interface Tap {
    /** Called with each reply before it reaches jetcd; false withholds it. */
    boolean onMessage(Object message);

    /** Called when the call ends, before jetcd is told. */
    default void onClose(Status status) {}
  }

  /**
   * Taps the calls whose full method name {@code picks} accepts, when each call starts (so a
   * condition of the test's, a flag or the calling thread, is read then): {@code perCall} gives
   * each call its tap.
   */
  static ClientInterceptor tap(Predicate<String> picks, Function<ClientCall<?, ?>, Tap> perCall) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        ClientCall<Q, R> call = next.newCall(method, options);
        if (!picks.test(method.getFullMethodName())) {
          return call;
        }
        Tap tap = perCall.apply(call);
        return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            super.start(
                new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                  @Override
                  public void onMessage(R message) {
                    if (tap.onMessage(message)) {
                      super.onMessage(message);
                    }
                  }

                  @Override
                  public void onClose(Status status, Metadata trailers) {
                    tap.onClose(status);
                    super.onClose(status, trailers);
                  }
                },
                headers);
          }
        };
      }
    };
  }

  /** The same tap for every call {@code picks} accepts: {@code deliver} decides on each reply. */
  static ClientInterceptor onEachReply(Predicate<String> picks, Predicate<Object> deliver) {
    return tap(picks, call -> deliver::test);
  }

  /** Withholds every reply to the calls {@code picks} accepts. */
  static ClientInterceptor withhold(Predicate<String> picks) {
    return onEachReply(picks, message -> false);
  }
}
