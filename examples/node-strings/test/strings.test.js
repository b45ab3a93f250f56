const { describe, it } = require('node:test');
const assert = require('node:assert');
const { capitalize, isPalindrome, camelCase } = require('../strings');

describe('capitalize', () => {
  it('upper-cases the first letter', () => {
    assert.strictEqual(capitalize('hello'), 'Hello');
  });

  it('leaves an empty string alone', () => {
    assert.strictEqual(capitalize(''), '');
  });
});

describe('isPalindrome', () => {
  it('ignores case and punctuation', () => {
    assert.ok(isPalindrome('A man, a plan, a canal: Panama'));
  });

  it('rejects non-palindromes', () => {
    assert.ok(!isPalindrome('fcorr'));
  });
});

describe('camelCase', () => {
  it('joins words from snake, kebab and spaced input', () => {
    assert.strictEqual(camelCase('user_id'), 'userId');
    assert.strictEqual(camelCase('Content-Type'), 'contentType');
    assert.strictEqual(camelCase('  big red dog '), 'bigRedDog');
  });
});
