/**
 * The Java agent LocalStack loads into DynamoDB Local, empty. LocalStack's own (downloaded on first use)
 * only lifts DynamoDB Local's limit of 20 indexes per table, which Ebb's tables never reach.
 */
public final class EmptyAgent {
  private EmptyAgent() {}

  public static void premain(String args) {}
}
