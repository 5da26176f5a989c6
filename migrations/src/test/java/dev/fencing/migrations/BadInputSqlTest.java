package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.fencing.testing.FenceSnapshot;
import dev.fencing.testing.TestDatabaseExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.util.PSQLException;

/**
 * The bad input catalogue (docs/BAD-INPUT.md), SQL entry point: malformed and hostile arguments to
 * every function of the fence's SQL API. Each case names its SQLSTATE, a fragment of the message
 * and of the DETAIL, and proves with a {@link FenceSnapshot} that nothing was written: the fence's
 * tables and catalog, the token sequence, the rejection log and the application tables are as they
 * were, even though the caller then tries to commit. Complements {@link BadInputTest}.
 */
class BadInputSqlTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  private static final Duration TTL = Duration.ofMinutes(5);
  private static final String KNOWN = "bad-sql/known";
  private static final String OTHER = "bad-sql/other";
  private static final String EXTERNAL = "bad-sql/external";
  private static final String FRESH = "bad-sql/fresh";
  private static final String[] APP_TABLES = {"app_fixed", "app_rows", "app_plain"};

  /** Stand-ins for the tokens issued in {@link #setUp()}, replaced when a case runs. */
  private enum Issued {
    KNOWN_TOKEN,
    OTHER_TOKEN
  }

  private static long knownToken;
  private static long otherToken;

  private Connection c;
  private Connection observer;

  @BeforeAll
  static void setUp() throws SQLException {
    assertThat(Fence.migrate(db)).isEqualTo(Fence.MIGRATIONS);
    try (Connection s = db.connect()) {
      knownToken = Fence.acquire(s, KNOWN, "setup", TTL);
      otherToken = Fence.acquire(s, OTHER, "setup", TTL);
      FenceSql.run(s, "SELECT fencing.create_resource(?, true)", EXTERNAL);
      FenceSql.run(s, "SELECT fencing.create_resource(?)", FRESH);
      Fence.execute(s, "CREATE TABLE app_fixed (id int PRIMARY KEY, v text)");
      Fence.execute(s, "CREATE TABLE app_rows (id int PRIMARY KEY, res text)");
      Fence.execute(s, "CREATE TABLE app_plain (id int PRIMARY KEY)");
      Fence.execute(s, "INSERT INTO app_fixed VALUES (1, 'kept')");
      Fence.execute(s, "INSERT INTO app_rows VALUES (1, 'known')");
      Fence.execute(s, "INSERT INTO app_plain VALUES (1)");
      FenceSql.run(s, "SELECT fencing.protect('app_fixed', ?)", KNOWN);
      FenceSql.run(s, "SELECT fencing.protect_rows('app_rows', 'res', 'bad-sql/')");
    }
  }

  @BeforeEach
  void connect() throws SQLException {
    c = db.connect();
    observer = db.connect();
  }

  @AfterEach
  void close() throws SQLException {
    c.close();
    observer.close();
  }

  static Stream<Arguments> refusals() {
    String positive = "fencing token must be positive, was ";
    String allowed = "; allowed are letters, digits and _ . : / @ + = # -";
    String sameLength = "check_tokens takes two one-dimensional arrays of the same length";
    return Stream.of(
        // --- tokens ---
        refusal(
            "B40",
            "check_token: token 0",
            "SELECT fencing.check_token(?, ?)",
            args(KNOWN, 0L),
            "ZF006",
            positive + "0",
            "\"token\": 0"),
        refusal(
            "B113",
            "check_token: token 0 on a resource created but never acquired (max_seen 0)",
            "SELECT fencing.check_token(?, 0)",
            args(FRESH),
            "ZF006",
            positive + "0",
            "\"token\": 0"),
        refusal(
            "B41",
            "check_token: token Long.MIN_VALUE",
            "SELECT fencing.check_token(?, ?)",
            args(KNOWN, Long.MIN_VALUE),
            "ZF006",
            positive + Long.MIN_VALUE,
            "\"token\": " + Long.MIN_VALUE),
        refusal(
            "B42",
            "check_token: NULL token",
            "SELECT fencing.check_token(?, ?::bigint)",
            args(KNOWN, null),
            "ZF002",
            "missing fencing token for resource \"" + KNOWN + "\"",
            "\"token\": null"),
        refusal(
            "B43",
            "check_token: Long.MAX_VALUE, never issued",
            "SELECT fencing.check_token(?, ?)",
            args(KNOWN, Long.MAX_VALUE),
            "ZF003",
            "fencing token " + Long.MAX_VALUE + " for resource \"" + KNOWN + "\" was never issued",
            "\"reason\": \"never_issued\""),
        refusal(
            "B44",
            "check_token: another resource's newer token (never issued for this one)",
            "SELECT fencing.check_token(?, ?)",
            args(KNOWN, Issued.OTHER_TOKEN),
            "ZF003",
            "was never issued",
            "\"resource\": \"" + KNOWN + "\""),
        refusal(
            "B45",
            "check_token: another resource's older token (stale for this one)",
            "SELECT fencing.check_token(?, ?)",
            args(OTHER, Issued.KNOWN_TOKEN),
            "ZF001",
            "stale fencing token",
            "\"reason\": \"stale_token\""),
        refusal(
            "B121",
            "check_one: token 0",
            "SELECT fencing.check_one(?, ?)",
            args(KNOWN, 0L),
            "ZF006",
            positive + "0",
            "\"token\": 0"),
        refusal(
            "B122",
            "check_one: NULL token",
            "SELECT fencing.check_one(?, ?::bigint)",
            args(KNOWN, null),
            "ZF002",
            "missing fencing token for resource \"" + KNOWN + "\"",
            "\"token\": null"),
        refusal(
            "B123",
            "check_one: Long.MAX_VALUE, never issued",
            "SELECT fencing.check_one(?, ?)",
            args(KNOWN, Long.MAX_VALUE),
            "ZF003",
            "fencing token " + Long.MAX_VALUE + " for resource \"" + KNOWN + "\" was never issued",
            "\"reason\": \"never_issued\""),
        refusal(
            "B124",
            "check_one: empty resource",
            "SELECT fencing.check_one(?, 1)",
            args(""),
            "ZF004",
            "resource name is empty",
            "\"resource\": \"\""),
        // --- resource names ---
        refusal(
            "B46",
            "check_token: empty resource",
            "SELECT fencing.check_token(?, 1)",
            args(""),
            "ZF004",
            "resource name is empty",
            "\"resource\": \"\""),
        refusal(
            "B47",
            "try_acquire: whitespace-only resource",
            "SELECT * FROM fencing.try_acquire(?, 'h', interval '1 minute')",
            args("   "),
            "ZF004",
            "the character \" \" at position 1" + allowed,
            "\"resource\": \"   \""),
        refusal(
            "B48",
            "try_acquire: 100,000-character resource",
            "SELECT * FROM fencing.try_acquire(repeat('r', 100000), 'h', interval '1 minute')",
            args(),
            "ZF004",
            "resource name is 100000 characters long; the limit is 200",
            "\"resource\": \"rrrr"),
        refusal(
            "B51",
            "try_acquire: SQL injection as resource",
            "SELECT * FROM fencing.try_acquire(?, 'h', interval '1 minute')",
            args("x'); DROP TABLE fencing.resource; --"),
            "ZF004",
            "the character \"'\" at position 2",
            "DROP TABLE"),
        refusal(
            "B52",
            "create_resource: control character (ESC)",
            "SELECT fencing.create_resource(?)",
            args("esc\u001bape"),
            "ZF004",
            "a control character (code 27) at position 4",
            "\"resource\""),
        refusal(
            "B53",
            "create_resource: unicode confusable (Cyrillic a)",
            "SELECT fencing.create_resource(?)",
            args("ledger-\u0430"),
            "ZF004",
            "the character \"\u0430\" at position 8",
            "\"resource\""),
        refusal(
            "B54",
            "status: LIKE metacharacter %",
            "SELECT * FROM fencing.status(?)",
            args("bad-sql/%"),
            "ZF004",
            "the character \"%\" at position 9",
            "\"resource\""),
        refusal(
            "B55",
            "status: LIKE metacharacter _ matches nothing but itself",
            "SELECT * FROM fencing.status(?)",
            args("bad-sql/know_"),
            "ZF004",
            "unknown fencing resource \"bad-sql/know_\"",
            "\"resource\": \"bad-sql/know_\""),
        refusal(
            "B56",
            "check_token: NUL byte in resource (refused by PostgreSQL itself)",
            "SELECT fencing.check_token(?, 1)",
            args("nul\u0000byte"),
            "22021",
            "invalid byte sequence",
            null),
        // --- check_tokens arrays ---
        refusal(
            "B49",
            "check_tokens: 10^6 resources, 10^6 - 1 tokens",
            "SELECT fencing.check_tokens(array_fill(?::text, ARRAY[1000000]),"
                + " array_fill(1::bigint, ARRAY[999999]))",
            args(KNOWN),
            "ZF006",
            sameLength
                + ": resources and their tokens, was 1000000"
                + " resources and 999999 tokens",
            "\"tokens\": 999999"),
        refusal(
            "B50",
            "check_tokens: 1001 entries",
            "SELECT fencing.check_tokens(array_fill(?::text, ARRAY[1001]),"
                + " array_fill(?::bigint, ARRAY[1001]))",
            args(KNOWN, Issued.KNOWN_TOKEN),
            "ZF006",
            "check_tokens takes at most 1000 resources, was 1001",
            "\"resources\": 1001"),
        refusal(
            "B57",
            "check_tokens: NULL arrays",
            "SELECT fencing.check_tokens(NULL, NULL)",
            args(),
            "ZF006",
            "was null and null",
            "\"resources\": 0"),
        refusal(
            "B58",
            "check_tokens: two-dimensional arrays",
            "SELECT fencing.check_tokens(ARRAY[ARRAY[?, ?]], ARRAY[ARRAY[?, ?]]::bigint[])",
            args(KNOWN, OTHER, Issued.KNOWN_TOKEN, Issued.OTHER_TOKEN),
            "ZF006",
            sameLength,
            "\"argument\": \"resources\""),
        refusal(
            "B59",
            "check_tokens: NULL among the tokens",
            "SELECT fencing.check_tokens(ARRAY[?, ?], ARRAY[?, NULL]::bigint[])",
            args(KNOWN, OTHER, Issued.KNOWN_TOKEN),
            "ZF002",
            "missing fencing token for resource \"" + OTHER + "\"",
            "\"token\": null"),
        // --- lease functions ---
        refusal(
            "B60",
            "try_acquire: ttl of ten years",
            "SELECT * FROM fencing.try_acquire(?, 'h', interval '10 years')",
            args("bad-sql/ttl"),
            "ZF006",
            "ttl must be between 00:00:00.001 and 7 days, was 10 years",
            "\"argument\": \"ttl\""),
        refusal(
            "B61",
            "try_acquire: negative ttl",
            "SELECT * FROM fencing.try_acquire(?, 'h', interval '-1 second')",
            args("bad-sql/ttl"),
            "ZF006",
            "ttl must be between",
            "\"value\": \"-00:00:01\""),
        refusal(
            "B62",
            "try_acquire: 'infinity' ttl (refused by PostgreSQL's interval input)",
            "SELECT * FROM fencing.try_acquire(?, 'h', ?::interval)",
            args("bad-sql/ttl", "infinity"),
            "22007",
            "invalid input syntax for type interval",
            null),
        refusal(
            "B63",
            "try_acquire: holder with a newline",
            "SELECT * FROM fencing.try_acquire(?, ?, interval '1 minute')",
            args("bad-sql/holder", "evil\nholder"),
            "ZF006",
            "holder must be 1 to 200 characters without control characters",
            "\"argument\": \"holder\""),
        refusal(
            "B64",
            "try_acquire: external resource has no lease",
            "SELECT * FROM fencing.try_acquire(?, 'h', interval '1 minute')",
            args(EXTERNAL),
            "ZF004",
            "is fenced by external tokens; it has no lease here",
            "\"resource\": \"" + EXTERNAL + "\""),
        refusal(
            "B65",
            "renew: another resource's token",
            "SELECT fencing.renew(?, ?, interval '1 minute')",
            args(OTHER, Issued.KNOWN_TOKEN),
            "ZF001",
            "stale fencing token " + "",
            "\"resource\": \"" + OTHER + "\""),
        refusal(
            "B66",
            "renew: ttl of 8 days",
            "SELECT fencing.renew(?, ?, interval '8 days')",
            args(KNOWN, Issued.KNOWN_TOKEN),
            "ZF006",
            "ttl must be between",
            "\"argument\": \"ttl\""),
        refusal(
            "B125",
            "try_acquire: ttl with a month part (1 day by comparison)",
            "SELECT * FROM fencing.try_acquire(?, 'h', ?::interval)",
            args("bad-sql/ttl", "1 mon -29 days"),
            "ZF006",
            "ttl must not have months or years (their length varies)",
            "\"argument\": \"ttl\""),
        refusal(
            "B126",
            "try_acquire: handover timeout with a month part",
            "SELECT * FROM fencing.try_acquire(?, 'h', interval '1 minute', ?::interval)",
            args("bad-sql/ttl", "1 mon -30 days 10 minutes"),
            "ZF006",
            "handover_timeout must not have months or years",
            "\"argument\": \"handover_timeout\""),
        refusal(
            "B127",
            "renew: ttl with a month part",
            "SELECT fencing.renew(?, ?, ?::interval)",
            args(KNOWN, Issued.KNOWN_TOKEN, "1 mon -29 days"),
            "ZF006",
            "ttl must not have months or years",
            "\"argument\": \"ttl\""),
        refusal(
            "B67",
            "release: NULL token",
            "SELECT fencing.release(?, NULL)",
            args(KNOWN),
            "ZF002",
            "missing fencing token",
            "\"token\": null"),
        // --- V44: the resource is judged before the token, the arrays whatever was written ---
        refusal(
            "B140",
            "renew: an external resource, NULL token (no lease here, whatever the token)",
            "SELECT fencing.renew(?, NULL, interval '1 minute')",
            args(EXTERNAL),
            "ZF004",
            "resource \"" + EXTERNAL + "\" is fenced by external tokens; it has no lease here",
            "\"issuer\": \"external\""),
        refusal(
            "B140",
            "release: an external resource, NULL token",
            "SELECT fencing.release(?, NULL)",
            args(EXTERNAL),
            "ZF004",
            "resource \"" + EXTERNAL + "\" is fenced by external tokens; it has no lease here",
            "\"issuer\": \"external\""),
        refusal(
            "B140",
            "renew: an unknown resource, NULL token",
            "SELECT fencing.renew('bad-sql/no-such', NULL, interval '1 minute')",
            args(),
            "ZF004",
            "unknown fencing resource \"bad-sql/no-such\"",
            "\"resource\": \"bad-sql/no-such\""),
        refusal(
            "B140",
            "release: an unknown resource, NULL token",
            "SELECT fencing.release('bad-sql/no-such', NULL)",
            args(),
            "ZF004",
            "unknown fencing resource \"bad-sql/no-such\"",
            "\"resource\": \"bad-sql/no-such\""),
        refusal(
            "B141",
            "check_tokens_if_written, nothing written: NULL arrays",
            "SELECT fencing.check_tokens_if_written(NULL, NULL)",
            args(),
            "ZF006",
            "was null and null",
            "\"resources\": 0"),
        refusal(
            "B141",
            "check_tokens_if_written, nothing written: 1 resource and 2 tokens",
            "SELECT fencing.check_tokens_if_written(ARRAY[?], ARRAY[?, ?]::bigint[])",
            args(KNOWN, Issued.KNOWN_TOKEN, Issued.KNOWN_TOKEN),
            "ZF006",
            sameLength + ": resources and their tokens, was 1 resources and 2 tokens",
            "\"tokens\": 2"),
        refusal(
            "B141",
            "check_tokens_if_written, nothing written: a NULL token array",
            "SELECT fencing.check_tokens_if_written(ARRAY[?], NULL)",
            args(KNOWN),
            "ZF006",
            "was 1 resources and null",
            "\"resources\": 1"),
        refusal(
            "B143",
            "check_tokens_if_written, nothing written: two-dimensional arrays",
            "SELECT fencing.check_tokens_if_written(ARRAY[ARRAY[?]], ARRAY[ARRAY[?]]::bigint[])",
            args(KNOWN, Issued.KNOWN_TOKEN),
            "ZF006",
            sameLength,
            "\"argument\": \"resources\""),
        refusal(
            "B143",
            "check_tokens_if_written, nothing written: 1,001 entries",
            "SELECT fencing.check_tokens_if_written(array_fill(?::text, ARRAY[1001]),"
                + " array_fill(?::bigint, ARRAY[1001]))",
            args(KNOWN, Issued.KNOWN_TOKEN),
            "ZF006",
            "check_tokens takes at most 1000 resources, was 1001",
            "\"resources\": 1001"),
        refusal(
            "B142",
            "check_token: NULL resource and NULL token (the name first)",
            "SELECT fencing.check_token(NULL, NULL)",
            args(),
            "ZF004",
            "resource name is null",
            "\"resource\": null"),
        refusal(
            "B142",
            "check_token: empty resource and NULL token",
            "SELECT fencing.check_token('', NULL)",
            args(),
            "ZF004",
            "resource name is empty",
            "\"resource\": \"\""),
        refusal(
            "B142",
            "check_one: malformed resource and token 0",
            "SELECT fencing.check_one('a b', 0)",
            args(),
            "ZF004",
            "resource name contains the character \" \" at position 2",
            "\"resource\": \"a b\""),
        refusal(
            "B142",
            "carry: NULL resource and NULL token",
            "SELECT fencing.carry(NULL, NULL)",
            args(),
            "ZF004",
            "resource name is null",
            "\"resource\": null"),
        refusal(
            "B68",
            "create_resource: existing local resource as external",
            "SELECT fencing.create_resource(?, true)",
            args(KNOWN),
            "ZF004",
            "resource \"" + KNOWN + "\" already exists as local",
            "\"issuer\": \"local\""),
        refusal(
            "B69",
            "create_resource: NULL mode",
            "SELECT fencing.create_resource(?, NULL)",
            args("bad-sql/null-mode"),
            "ZF006",
            "external and strict must not be null",
            "\"resource\": \"bad-sql/null-mode\""),
        // --- operator commands ---
        refusal(
            "B70",
            "advance_sequence: gap Long.MAX_VALUE",
            "SELECT fencing.advance_sequence(?)",
            args(Long.MAX_VALUE),
            "ZF006",
            "would move the token sequence past the largest bigint; the largest gap possible is",
            "\"argument\": \"gap\""),
        refusal(
            "B136",
            "advance_sequence (V42): gap NULL",
            "SELECT fencing.advance_sequence(NULL)",
            args(),
            "ZF006",
            "gap must be positive, was null",
            "\"argument\": \"gap\""),
        refusal(
            "B71",
            "advance_sequence: gap 0",
            "SELECT fencing.advance_sequence(0)",
            args(),
            "ZF006",
            "gap must be positive, was 0",
            "\"value\": 0"),
        refusal(
            "B130",
            "advance_sequence (V40): a gap past the last token of the current epoch",
            "SELECT fencing.advance_sequence(?)",
            args(1L << 43),
            "ZF006",
            "would move the token sequence past the last token",
            "\"argument\": \"gap\""),
        refusal(
            "B131",
            "advance_sequence (V40): the largest gap below the largest bigint (left the fence unable to issue for good)",
            "SELECT fencing.advance_sequence(9223372036854775807 - (SELECT last_value FROM fencing.token_seq))",
            args(),
            "ZF006",
            "would move the token sequence past the last token",
            "\"argument\": \"gap\""),
        refusal(
            "B128",
            "lock_for_advance (V32, owner only): an id no resource has (its advisory key is NULL)",
            "SELECT fencing.lock_for_advance(?, 1178946115)",
            args(Long.MAX_VALUE),
            "ZF004",
            "no fencing resource has id " + Long.MAX_VALUE,
            "\"argument\": \"id\""),
        refusal(
            "B129",
            "lock_for_advance (V32, owner only): a NULL key space",
            "SELECT fencing.lock_for_advance((SELECT id FROM fencing.resource WHERE name = ?), NULL)",
            args(KNOWN),
            "ZF006",
            "the advisory key space must not be null",
            "\"argument\": \"space\""),
        refusal(
            "B72",
            "protect: the fence's own resource table",
            "SELECT fencing.protect('fencing.resource', ?)",
            args(KNOWN),
            "ZF006",
            "fencing.resource is one of the fence's own tables",
            "\"value\": \"fencing.resource\""),
        refusal(
            "B73",
            "protect: NULL table",
            "SELECT fencing.protect(NULL, ?)",
            args(KNOWN),
            "ZF006",
            "table must not be null",
            "\"argument\": \"table\""),
        refusal(
            "B74",
            "protect: injection as table name (the regclass cast refuses it)",
            "SELECT fencing.protect(?::regclass, 'x')",
            args("no_such_table; DROP TABLE app_fixed"),
            "42602",
            "invalid name syntax",
            null),
        refusal(
            "B75",
            "protect_rows: SQL injection as column",
            "SELECT fencing.protect_rows('app_plain', ?)",
            args("id\"; DROP TABLE app_plain; --"),
            "ZF006",
            "table public.app_plain has no column",
            "\"argument\": \"column\""),
        refusal(
            "B76",
            "protect_rows: malformed prefix",
            "SELECT fencing.protect_rows('app_plain', 'id', ?)",
            args("pre fix"),
            "ZF004",
            "the character \" \" at position 4",
            "\"resource\": \"pre fix\""),
        refusal(
            "B77",
            "unprotect: the fence's own lease table",
            "SELECT fencing.unprotect('fencing.lease')",
            args(),
            "ZF006",
            "fencing.lease is one of the fence's own tables",
            "\"argument\": \"table\""),
        refusal(
            "B78",
            "record_rejection: not a refusal's DETAIL",
            "SELECT fencing.record_rejection(?)",
            args("ZF001'; --"),
            "ZF006",
            "record_rejection takes the DETAIL of a refusal",
            "\"argument\": \"refusal\""),
        refusal(
            "B111",
            "record_rejection: a refusal that did not happen (no receipt)",
            "SELECT fencing.record_rejection(?)",
            args("{\"resource\": \"" + KNOWN + "\", \"token\": 1, \"reason\": \"stale_token\"}"),
            "ZF006",
            "the refusal has no valid receipt",
            "\"reason\": \"stale_token\""),
        refusal(
            "B112",
            "record_rejection: a lease-lost refusal of a lease that is still valid",
            "SELECT fencing.record_rejection('{\"resource\": \""
                + KNOWN
                + "\", \"token\": '"
                + " || ? || ', \"reason\": \"lease_lost\"}')",
            args(Issued.KNOWN_TOKEN),
            "55000",
            "is still valid",
            "\"resource\": \"" + KNOWN + "\""),
        // --- rejections (V9) ---
        refusal(
            "B115",
            "rejections: resource name with a quote and a comment",
            "SELECT * FROM fencing.rejections(?)",
            args("ledger'; --"),
            "ZF004",
            "the character \"'\" at position 7",
            "\"resource\": \"ledger'; --\""),
        refusal(
            "B116",
            "rejections: limit 0",
            "SELECT * FROM fencing.rejections(?, 0)",
            args(KNOWN),
            "ZF006",
            "limit must be from 1 to 10000, was 0",
            "\"argument\": \"limit\""),
        refusal(
            "B117",
            "rejections: limit NULL",
            "SELECT * FROM fencing.rejections(?, ?::integer)",
            args(KNOWN, null),
            "ZF006",
            "limit must be from 1 to 10000, was null",
            "\"argument\": \"limit\""),
        // --- carry and protected tables ---
        refusal(
            "B79",
            "carry: resource with a comma (the carried list's separator)",
            "SELECT fencing.carry(?, 1)",
            args("a,b 99"),
            "ZF004",
            "the character \",\" at position 2",
            "\"resource\": \"a,b 99\""),
        refusal(
            "B80",
            "protected table: write carrying a token of another resource",
            "SELECT fencing.carry(?, ?); INSERT INTO app_fixed VALUES (2, 'forged')",
            args(OTHER, Issued.OTHER_TOKEN),
            "ZF002",
            "missing fencing token for resource \""
                + KNOWN
                + "\": table public.app_fixed is protected",
            "\"table\": \"public.app_fixed\""),
        refusal(
            "B81",
            "protect_rows table: row whose resource column is NULL",
            "SELECT fencing.check_token(?, ?); INSERT INTO app_rows VALUES (2, NULL)",
            args(KNOWN, Issued.KNOWN_TOKEN),
            "ZF004",
            "a write to protected table public.app_rows has no fencing resource",
            "\"table\": \"public.app_rows\""),
        refusal(
            "B114",
            "protected table: a token list set with set_config, not carried in the transaction",
            "SELECT set_config('fencing.tokens', ? || ' ' || ? || ',', false);"
                + " INSERT INTO app_fixed VALUES (3, 'session-level')",
            args(KNOWN, Issued.KNOWN_TOKEN),
            "ZF002",
            "missing fencing token for resource \""
                + KNOWN
                + "\": table public.app_fixed is protected",
            "\"reason\": \"missing_token\""),
        refusal(
            "B82",
            "protected table: forged marker set with set_config",
            "SELECT set_config('fencing.checked', '1:' || ? || ':00000000000000000000000000000000,',"
                + " true); DELETE FROM app_fixed",
            args(Issued.KNOWN_TOKEN),
            "ZF002",
            "table public.app_fixed is protected",
            "\"resource\": \"" + KNOWN + "\""),
        refusal(
            "B134",
            "protected table (V42): a carried list, forged with this transaction's stamp, whose token"
                + " is 19 digits past the largest bigint",
            "SELECT fencing.carry(?, ?); SELECT set_config('fencing.tokens',"
                + " current_setting('fencing.carry_stamp') || '|' || ? || ' 9999999999999999999,',"
                + " true); INSERT INTO app_fixed VALUES (4, 'past-bigint')",
            args(OTHER, Issued.OTHER_TOKEN, KNOWN),
            "ZF002",
            "missing fencing token for resource \""
                + KNOWN
                + "\": table public.app_fixed is protected",
            "\"reason\": \"missing_token\""),
        refusal(
            "B135",
            "protected table (V42): a forged checked marker whose token is 19 digits past the"
                + " largest bigint",
            "SELECT set_config('fencing.checked', (SELECT id FROM fencing.resource WHERE name = ?)"
                + " || ':9999999999999999999:00000000000000000000000000000000,', true);"
                + " DELETE FROM app_fixed",
            args(KNOWN),
            "ZF002",
            "table public.app_fixed is protected",
            "\"resource\": \"" + KNOWN + "\""));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("refusals")
  void refusedWithoutWrites(
      String id,
      String label,
      String sql,
      List<@Nullable Object> args,
      String sqlState,
      String message,
      @Nullable String detail)
      throws SQLException {
    FenceSnapshot before = FenceSnapshot.take(observer, APP_TABLES);

    c.setAutoCommit(false);
    SQLException e = catchThrowableOfType(SQLException.class, () -> run(sql, args));
    assertThat((Object) e).as("%s: expected SQLSTATE %s", id, sqlState).isNotNull();
    try {
      c.commit(); // the caller tries to keep whatever the failed call might have written
    } catch (SQLException rolledBack) {
      // pgjdbc may report that the server rolled the aborted transaction back
    }

    assertThat(e.getSQLState()).as("%s: %s", id, e.getMessage()).isEqualTo(sqlState);
    assertThat(e.getMessage()).as(id).contains(message).hasSizeLessThan(2_000);
    if (detail != null) {
      String serverDetail =
          ((PSQLException) e).getServerErrorMessage() == null
              ? null
              : ((PSQLException) e).getServerErrorMessage().getDetail();
      assertThat(serverDetail).as("%s DETAIL", id).isNotNull().contains(detail);
    }
    assertThat(FenceSnapshot.take(observer, APP_TABLES)).as(id).isEqualTo(before);
  }

  @Test
  @DisplayName("B83 release twice: the second returns false and writes nothing")
  void releaseTwice() throws SQLException {
    String r = "bad-sql/release-twice";
    long token = Fence.acquire(c, r, "holder", TTL);
    assertThat(Fence.release(c, r, token)).isTrue();
    FenceSnapshot before = FenceSnapshot.take(observer, APP_TABLES);
    assertThat(Fence.release(c, r, token)).isFalse();
    assertThat(FenceSnapshot.take(observer, APP_TABLES)).isEqualTo(before);
  }

  @Test
  @DisplayName("B84 check_tokens: the same resource twice with different tokens is refused")
  void sameResourceTwiceWithDifferentTokens() throws SQLException {
    String r = "bad-sql/twice";
    long first = Fence.acquire(c, r, "first", Duration.ofMillis(1));
    long second = Fence.acquireAfterExpiry(c, r, "second", TTL);
    FenceSnapshot before = FenceSnapshot.take(observer, APP_TABLES);
    c.setAutoCommit(false);
    SQLException e =
        Fence.assertFails(
            "ZF001",
            () ->
                FenceSql.run(
                    c,
                    "SELECT fencing.check_tokens(ARRAY[?, ?], ARRAY[?, ?]::bigint[])",
                    r,
                    r,
                    second,
                    first));
    c.rollback();
    assertThat(e.getMessage()).contains("stale fencing token " + first);
    assertThat(FenceSnapshot.take(observer, APP_TABLES)).isEqualTo(before);
  }

  @Test
  @DisplayName(
      "B132 a NULL token for an external resource: ZF002 whose hint names its issuer, not a lease")
  void missingTokenOfAnExternalResourceIsNotSentToALease() throws SQLException {
    FenceSnapshot before = FenceSnapshot.take(observer, APP_TABLES);
    c.setAutoCommit(false);
    for (String sql :
        List.of(
            "SELECT fencing.check_token(?, NULL)",
            "SELECT fencing.check_one(?, NULL)",
            "SELECT fencing.check_tokens(ARRAY[?], ARRAY[NULL]::bigint[])",
            "SELECT fencing.carry(?, NULL)")) {
      SQLException external =
          Fence.assertFails(Fence.MISSING, () -> FenceSql.run(c, sql, EXTERNAL));
      c.rollback();
      assertThat(external.getMessage())
          .as(sql)
          .contains("missing fencing token for resource \"" + EXTERNAL + "\"");
      assertThat(hint(external))
          .as(sql)
          .contains("fenced by external tokens", "the token its issuer (ZooKeeper, etcd) gave")
          .doesNotContain("acquire a lease");
      // a local resource's holder is still sent to its lease
      SQLException local = Fence.assertFails(Fence.MISSING, () -> FenceSql.run(c, sql, KNOWN));
      c.rollback();
      assertThat(hint(local)).as(sql).isEqualTo("acquire a lease and present its token");
    }
    assertThat(FenceSnapshot.take(observer, APP_TABLES)).isEqualTo(before);
  }

  @ParameterizedTest
  @EnumSource(
      value = Interleaving.Isolation.class,
      names = {"REPEATABLE_READ", "SERIALIZABLE"})
  @DisplayName(
      "B133 reset_external under a snapshot older than the resource's last change: 40001 naming"
          + " READ COMMITTED")
  void resetExternalUnderAnOlderSnapshotSaysToRunItUnderReadCommitted(Interleaving.Isolation iso)
      throws SQLException {
    String r = "bad-sql/reset-" + iso.tag();
    try (Connection app = db.connect()) {
      FenceSql.run(app, "SELECT fencing.create_resource(?, true)", r);
      Fence.check(app, r, 10L);

      c.setAutoCommit(false);
      c.setTransactionIsolation(iso.jdbcLevel);
      assertThat(FenceSql.string(c, "SELECT current_setting('transaction_isolation')"))
          .isEqualTo(iso.setting); // the operator's snapshot is taken
      Fence.check(app, r, 20L); // a newer token committed after it

      FenceSnapshot before = FenceSnapshot.take(observer, APP_TABLES);
      SQLException e =
          Fence.assertFails(
              Interleaving.SERIALIZATION_FAILURE,
              () -> FenceSql.run(c, "SELECT fencing.reset_external(?, 5)", r));
      try {
        c.commit();
      } catch (SQLException rolledBack) {
        // the server rolled the aborted transaction back
      }
      assertThat(e.getMessage())
          .contains(
              "reset_external cannot reset resource \""
                  + r
                  + "\" under "
                  + iso.setting.toUpperCase(Locale.ROOT),
              "run reset_external under READ COMMITTED");
      assertThat(FenceSnapshot.take(observer, APP_TABLES)).isEqualTo(before);
      assertThat(Fence.maxSeen(observer, r)).isEqualTo(20L);

      // under the same isolation level, a snapshot the change is in: reset as asked
      assertThat(FenceSql.longValue(c, "SELECT fencing.reset_external(?, 15)", r)).isEqualTo(20L);
      c.commit();
      assertThat(Fence.maxSeen(observer, r)).isEqualTo(15L);
    } finally {
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    }
  }

  // ---------------------------------------------------------------------------------------------

  private static @Nullable String hint(SQLException e) {
    return ((PSQLException) e).getServerErrorMessage() == null
        ? null
        : ((PSQLException) e).getServerErrorMessage().getHint();
  }

  private void run(String sql, List<@Nullable Object> args) throws SQLException {
    int next = 0;
    for (String statement : sql.split("; ")) {
      int count = (int) statement.chars().filter(ch -> ch == '?').count();
      try (PreparedStatement ps = c.prepareStatement(statement)) {
        for (int i = 0; i < count; i++) {
          Object arg = args.get(next++);
          if (arg instanceof Issued issued) {
            arg = issued == Issued.KNOWN_TOKEN ? knownToken : otherToken;
          }
          ps.setObject(i + 1, arg);
        }
        ps.execute();
      }
    }
  }

  private static Arguments refusal(
      String id,
      String label,
      String sql,
      List<@Nullable Object> args,
      String sqlState,
      String message,
      @Nullable String detail) {
    return arguments(id, label, sql, args, sqlState, message, detail);
  }

  private static List<@Nullable Object> args(@Nullable Object... values) {
    return new ArrayList<>(Arrays.asList(values));
  }
}
