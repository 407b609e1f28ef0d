import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local listening on 127.0.0.1 only, answering only its front (dynamodb-front.ts). Its jar
 * takes the same arguments but has no option for the address, and Jetty then listens on every
 * interface; so this builds the server the jar's own way, sets each connector's host before it
 * starts, and wraps its handler so a request without the front's key (from the environment, which
 * other OS users cannot read) is refused: loopback is reachable by every user of the machine.
 * Telemetry is never configured.
 */
public final class LoopbackDynamoDbLocal {
  static final String KEY_HEADER = "x-ebb-stand-in-key";

  private LoopbackDynamoDbLocal() {}

  public static void main(String[] args) throws Exception {
    String key = System.getenv("EBB_DYNAMODB_FRONT_KEY");
    if (key == null || key.isEmpty()) {
      System.err.println("EBB_DYNAMODB_FRONT_KEY is not set: DynamoDB Local would answer anyone");
      System.exit(2);
    }
    byte[] expected = key.getBytes(StandardCharsets.UTF_8);
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) {
      ((ServerConnector) connector).setHost("127.0.0.1");
    }
    Handler inner = server.getHandler();
    server.setHandler(
        new Handler.Wrapper(inner) {
          @Override
          public boolean handle(Request request, Response response, Callback callback)
              throws Exception {
            String sent = request.getHeaders().get(KEY_HEADER);
            if (sent == null
                || !MessageDigest.isEqual(expected, sent.getBytes(StandardCharsets.UTF_8))) {
              Response.writeError(request, response, callback, 403, "only the local runtime's front may call");
              return true;
            }
            return super.handle(request, response, callback);
          }
        });
    proxy.start();
    proxy.join();
  }
}
