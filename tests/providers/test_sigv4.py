"""SigV4 signing against the vectors AWS publishes.

- ``get-vanilla``, ``post-x-www-form-urlencoded`` and
  ``get-vanilla-query-order-key-case`` from the AWS Signature Version 4 test
  suite (credentials ``AKIDEXAMPLE``, 2015-08-30T12:36:00Z, us-east-1,
  service ``service``);
- the "GET Object" example of the S3 guide "Signature Calculations for the
  Authorization Header" (2013-05-24, ``examplebucket``, ``Range`` header).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from openprogram.providers._sigv4 import AwsCredentials, credentials_from_env, sign

SUITE = AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
SUITE_TIME = datetime(2015, 8, 30, 12, 36, tzinfo=UTC)
SCOPE = "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


# Each case: method, URL, headers, body, expected SignedHeaders, expected signature.
@pytest.mark.parametrize(
    "case",
    [
        (
            "GET",
            "https://example.amazonaws.com/",
            {"Host": "example.amazonaws.com"},
            b"",
            "host;x-amz-date",
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ),
        (
            "POST",
            "https://example.amazonaws.com/",
            {"Host": "example.amazonaws.com", "Content-Type": "application/x-www-form-urlencoded"},
            b"Param1=value1",
            "content-type;host;x-amz-date",
            "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
        ),
        (
            "GET",
            "https://example.amazonaws.com/?Param2=value2&Param1=value1",
            {"Host": "example.amazonaws.com"},
            b"",
            "host;x-amz-date",
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
        ),
    ],
)
def test_signature_v4_test_suite(case: tuple[str, str, dict[str, str], bytes, str, str]) -> None:
    method, url, headers, body, signed, signature = case
    out = sign(
        method=method,
        url=url,
        headers=headers,
        body=body,
        credentials=SUITE,
        region="us-east-1",
        service="service",
        now=SUITE_TIME,
    )
    assert out["X-Amz-Date"] == "20150830T123600Z"
    assert out["Authorization"] == (
        f"AWS4-HMAC-SHA256 Credential={SCOPE}, SignedHeaders={signed}, Signature={signature}"
    )


def test_s3_get_object_example() -> None:
    out = sign(
        method="GET",
        url="https://examplebucket.s3.amazonaws.com/test.txt",
        headers={
            "Host": "examplebucket.s3.amazonaws.com",
            "Range": "bytes=0-9",
            "x-amz-content-sha256": EMPTY_SHA256,
        },
        body=b"",
        credentials=AwsCredentials(
            "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        ),
        region="us-east-1",
        service="s3",
        now=datetime(2013, 5, 24, tzinfo=UTC),
    )
    assert out["Authorization"].endswith(
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    )


def test_a_session_token_is_sent_and_signed() -> None:
    creds = AwsCredentials("AKID", "secret", "the-token")
    out = sign(
        method="POST",
        url="https://h/",
        headers={"Host": "h"},
        body=b"{}",
        credentials=creds,
        region="r",
        service="bedrock",
        now=SUITE_TIME,
    )
    assert out["X-Amz-Security-Token"] == "the-token"
    assert "SignedHeaders=host;x-amz-date;x-amz-security-token," in out["Authorization"]


def test_an_encoded_path_is_encoded_again_for_the_canonical_request() -> None:
    # Non-S3 services double-encode: the signature of ":" sent as "%3A" differs from ":".
    args = {
        "method": "POST",
        "headers": {"Host": "h"},
        "body": b"",
        "credentials": SUITE,
        "region": "us-east-1",
        "service": "bedrock",
        "now": SUITE_TIME,
    }
    encoded = sign(url="https://h/model/a%3A0/converse", **args)  # type: ignore[arg-type]
    plain = sign(url="https://h/model/a:0/converse", **args)  # type: ignore[arg-type]
    assert encoded["Authorization"] != plain["Authorization"]


def test_credentials_and_their_repr() -> None:
    creds = credentials_from_env(
        {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "sssh", "AWS_SESSION_TOKEN": "tok"}
    )
    assert creds == AwsCredentials("AKID", "sssh", "tok")
    assert "sssh" not in repr(creds)
    assert "tok" not in repr(creds)
    assert credentials_from_env({"AWS_ACCESS_KEY_ID": "AKID"}) is None
